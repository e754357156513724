// Package service renders and installs claw.service, the systemd unit that
// runs "claw serve" hardened, and checks it with systemd's own scoring.
//
// # The unit
//
// [Render] makes the unit from [Options]: the claw binary, the user (a
// DynamicUser unless a system user is named), CLAW_HOME (by default
// /var/lib/claw, the unit's StateDirectory) and the workspace. The service
// gets no capabilities, no_new_privs, a read-only system, a private /tmp
// and devices, hidden kernel tunables, logs and modules, an invisible
// /proc of its own, only unix and IP sockets, and a system call filter
// (@system-service, failing with EPERM).
//
// Everything the unit restricts is inherited by the executor's child,
// which confines each action further. So the unit allows what that child
// needs and no more: the namespaces it creates ([ExecutorNamespaces]) and
// the system calls missing from @system-service ([ExecutorSyscalls]:
// Landlock, seccomp and the mount calls of its private view). Without the
// Landlock calls the executor would find no Landlock and refuse to run
// anything; it never runs an action unconfined.
//
// The service runs as an unprivileged user, so the executor does not
// switch users: the service's config sets [sandbox] run_as = "" ([Config]).
//
//	unit, err := service.Render(service.Options{Binary: "/usr/local/bin/claw"})
//	res, err := service.Install("/etc/systemd/system", unit, false)
//	score, report, err := service.Analyze(ctx, res.Path) // ≤ MaxExposure
//
// # systemd
//
// [Systemctl] refuses with [ErrNoSystemd] when systemd is not the running
// init (containers); [Install] and [Analyze] work without it, the latter
// through "systemd-analyze security --offline=yes".
package service
