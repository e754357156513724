/*
 * sysprobe makes the raw system calls the Go probe cannot (an i386 call
 * through int 0x80, an x32 call) and the ones the escape suite wants with
 * exact arguments, and prints "allowed" or "denied ERRNO" like the Go
 * probe. The executor's tests build it with the C compiler cgo uses.
 *
 * Every call is harmless even where it is allowed: kexec_load names no
 * architecture, init_module has no image, finit_module no file, reboot
 * lacks its magic numbers, TIOCLINUX only asks for the shift state, and
 * process_vm_readv/writev touch this process's own memory. setid and
 * socket make files and sockets in the places the test names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static const char *errname(int e)
{
	static char buf[16];
	switch (e) {
	case 0: return "none";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case EFAULT: return "EFAULT";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENOTTY: return "ENOTTY";
	case ENOSYS: return "ENOSYS";
	case ENOEXEC: return "ENOEXEC";
	case EEXIST: return "EEXIST";
	case EXDEV: return "EXDEV";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case ESOCKTNOSUPPORT: return "ESOCKTNOSUPPORT";
	}
	snprintf(buf, sizeof buf, "E%d", e);
	return buf;
}

static int result(long r)
{
	if (r < 0)
		printf("denied %s\n", errname(errno));
	else
		printf("allowed\n");
	return 0;
}

static int vm(int write)
{
	char src[8] = "claw", dst[8] = "";
	struct iovec local = {dst, sizeof dst}, remote = {src, sizeof src};
	if (write) {
		struct iovec from = {src, sizeof src}, to = {dst, sizeof dst};
		return result(process_vm_writev(getpid(), &from, 1, &to, 1, 0));
	}
	return result(process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
}

static int tioclinux(const char *path, int highbit)
{
	int fd = open(path, O_RDWR | O_NOCTTY);
	if (fd < 0) {
		printf("denied open %s: %s\n", path, errname(errno));
		return 0;
	}
	unsigned long cmd = TIOCLINUX;
	if (highbit)
		cmd |= 1UL << 32;
	char sub = 6; /* TIOCL_GETSHIFTSTATE */
	return result(syscall(SYS_ioctl, fd, cmd, &sub));
}

/* i386 getpid (20) through the 32-bit entry point */
static int int80(void)
{
#if defined(__x86_64__)
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	if (r < 0) {
		errno = -r;
		r = -1;
	}
	return result(r);
#else
	printf("unsupported\n");
	return 0;
#endif
}

/* getpid with the x32 bit set */
static int x32(void)
{
#if defined(__x86_64__)
	return result(syscall(0x40000000 | SYS_getpid));
#else
	printf("unsupported\n");
	return 0;
#endif
}

/*
 * fork MAX FILE [MARKER]: start children that wait, until fork fails or
 * MAX are running; write "N ERRNO" (how many were started, why the next
 * was not) to FILE and stdout, give the test a moment to see them, exit.
 */
static int forks(long max, const char *file)
{
	long n;
	int err = 0;
	for (n = 0; n < max; n++) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			pause();
			_exit(0);
		}
	}
	FILE *f = fopen(file, "w");
	if (f) {
		fprintf(f, "%ld %s\n", n, errname(err));
		fclose(f);
	}
	printf("%ld %s\n", n, errname(err));
	fflush(stdout);
	usleep(300 * 1000);
	return 0;
}

/* nofile MAX: open /dev/null until it fails or MAX are open: "N ERRNO" */
static int nofile(long max)
{
	long n;
	int err = 0;
	for (n = 0; n < max; n++) {
		if (open("/dev/null", O_RDONLY) < 0) {
			err = errno;
			break;
		}
	}
	printf("%ld %s\n", n, errname(err));
	return 0;
}

/* plain makes an empty file with mode 0644 for a call that changes a mode */
static int plain(const char *path)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		printf("denied create %s: %s\n", path, errname(errno));
	return fd;
}

/*
 * setid CALL MODE PATH: make the file PATH (which must not exist) with the
 * octal MODE, or make it 0644 and then give it MODE, with the system call
 * CALL itself (not a libc wrapper that might pick another); "unsupported"
 * when this architecture lacks the call.
 */
static int setid(const char *call, const char *modes, const char *path)
{
	mode_t mode = strtoul(modes, NULL, 8);
	int flags = O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC;
	int fd;
	umask(0);
	if (!strcmp(call, "chmod")) {
#ifdef SYS_chmod
		if (plain(path) < 0)
			return 0;
		return result(syscall(SYS_chmod, path, mode));
#endif
	} else if (!strcmp(call, "fchmod")) {
		if ((fd = plain(path)) < 0)
			return 0;
		return result(syscall(SYS_fchmod, fd, mode));
	} else if (!strcmp(call, "fchmodat")) {
		if (plain(path) < 0)
			return 0;
		return result(syscall(SYS_fchmodat, AT_FDCWD, path, mode));
	} else if (!strcmp(call, "fchmodat2")) {
		if (plain(path) < 0)
			return 0;
		return result(syscall(SYS_fchmodat2, AT_FDCWD, path, mode, 0));
	} else if (!strcmp(call, "open")) {
#ifdef SYS_open
		return result(syscall(SYS_open, path, flags, mode));
#endif
	} else if (!strcmp(call, "openat")) {
		return result(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
	} else if (!strcmp(call, "creat")) {
#ifdef SYS_creat
		return result(syscall(SYS_creat, path, mode));
#endif
	} else if (!strcmp(call, "openat2")) {
		struct { unsigned long long flags, mode, resolve; } how = {flags, mode, 0};
		return result(syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
	} else if (!strcmp(call, "tmpfile")) {
		/* an unnamed file in PATH's directory, then linked as PATH */
		char dir[4096], proc[64];
		snprintf(dir, sizeof dir, "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		fd = syscall(SYS_openat, AT_FDCWD, slash ? dir : ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
		if (fd < 0)
			return result(fd);
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		return result(linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW));
	} else if (!strcmp(call, "mknod")) {
#ifdef SYS_mknod
		return result(syscall(SYS_mknod, path, S_IFREG | mode, 0));
#endif
	} else if (!strcmp(call, "mknodat")) {
		return result(syscall(SYS_mknodat, AT_FDCWD, path, S_IFREG | mode, 0));
	} else {
		printf("usage: sysprobe setid CALL MODE PATH\n");
		return 2;
	}
	printf("unsupported\n");
	return 0;
}

/* setcap PATH: give PATH a file capability (CAP_SETUID, effective) */
static int setcap(const char *path)
{
	unsigned int v2[5] = {0x02000001, 1u << 7, 0, 0, 0};
	return result(setxattr(path, "security.capability", v2, sizeof v2, 0));
}

/* socket FAMILY TYPE PROTOCOL: create (and close) that socket */
static int sock(int family, int type, int protocol)
{
	int fd = socket(family, type, protocol);
	if (fd >= 0)
		close(fd);
	return result(fd);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	const char *a = argc > 2 ? argv[2] : "";
	if (!strcmp(what, "vm_readv"))
		return vm(0);
	if (!strcmp(what, "vm_writev"))
		return vm(1);
	if (!strcmp(what, "kexec_load"))
		return result(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0xffff0000UL));
	if (!strcmp(what, "init_module"))
		return result(syscall(SYS_init_module, NULL, 0UL, ""));
	if (!strcmp(what, "finit_module"))
		return result(syscall(SYS_finit_module, -1, "", 0));
	if (!strcmp(what, "reboot"))
		return result(syscall(SYS_reboot, 0, 0, 0, NULL));
	if (!strcmp(what, "tioclinux"))
		return tioclinux(a, 0);
	if (!strcmp(what, "tioclinux-highbit"))
		return tioclinux(a, 1);
	if (!strcmp(what, "int80"))
		return int80();
	if (!strcmp(what, "x32"))
		return x32();
	if (!strcmp(what, "fork") && argc > 3)
		return forks(atol(a), argv[3]);
	if (!strcmp(what, "nofile"))
		return nofile(atol(a));
	if (!strcmp(what, "setid") && argc > 4)
		return setid(a, argv[3], argv[4]);
	if (!strcmp(what, "setcap"))
		return setcap(a);
	if (!strcmp(what, "socket") && argc > 4)
		return sock(atoi(a), atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(what, "ids")) {
		printf("%d %d\n", (int)getuid(), (int)geteuid());
		return 0;
	}
	printf("usage: sysprobe WHAT [ARGS]\n");
	return 2;
}
