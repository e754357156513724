package executor

import "golang.org/x/sys/unix"

func syscallOpenNoCloexec(p string) (int, error) { return unix.Open(p, unix.O_RDONLY, 0) }

func closeFD(fd int) { unix.Close(fd) }

type fileOwner struct{ uid, gid uint32 }

func ownerOf(p string) (fileOwner, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fileOwner{}, err
	}
	return fileOwner{st.Uid, st.Gid}, nil
}
