package serve

import (
	"context"
	"net"
	"os"
	"strconv"
	"time"
)

// The systemd notify protocol is one datagram per state change on the
// socket in $NOTIFY_SOCKET; it is small enough to speak directly.

// sdNotify sends state to the service manager. It does nothing when
// NOTIFY_SOCKET is unset.
func sdNotify(state string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:] // abstract namespace
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// watchdogInterval is half of $WATCHDOG_USEC when the watchdog is meant
// for this process, else 0.
func watchdogInterval() time.Duration {
	us, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || us <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(us) * time.Microsecond / 2
}

// notifyLoop says READY=1, then WATCHDOG=1 every half watchdog period
// until ctx ends, then STOPPING=1.
func (s *Server) notifyLoop(ctx context.Context) {
	if err := sdNotify("READY=1"); err != nil {
		s.log.Warn("sd_notify failed", "event", "sd_notify", "error", err.Error())
	}
	iv := watchdogInterval()
	if iv <= 0 {
		<-ctx.Done()
		_ = sdNotify("STOPPING=1")
		return
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = sdNotify("STOPPING=1")
			return
		case <-t.C:
			_ = sdNotify("WATCHDOG=1")
		}
	}
}
