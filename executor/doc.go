// Package executor runs one action (a shell command or an in-sandbox tool)
// inside a sandbox made for that action alone, and reports what happened
// and what confinement it had. It is the only code in claw that runs a
// command or touches a file for a tool. It enforces a [Spec]; it never
// decides (the gate does).
//
// # Running an action
//
//	res, err := executor.Run(ctx, executor.Spec{
//		Argv:  []string{"bash", "-c", "go test ./..."},
//		Read:  []string{"/home/u/go/pkg/mod"},
//		Write: []string{"/home/u/ws"},
//	})
//
// err wraps [ErrUnavailable] when the kernel cannot confine the action
// (nothing ran; exit 5), [ErrInvalidSpec] for a malformed Spec, is a
// [*SetupError] when the child failed to confine itself (nothing ran; the
// Result's exit code is 126) and wraps [ErrNotFound] for a missing command
// (127). Otherwise err is nil and [Result] carries the command's exit
// status or signal, its output (head and tail kept up to MaxOutput per
// stream, with SHA-256 digests of the whole streams), the duration, and
// [Applied]: the Landlock ABI, seccomp, namespaces, capabilities dropped,
// read-only remount and whether the run was degraded.
//
// Tools (file_read, file_write, edit_file, file_list, http) take JSON Args
// instead of Argv. They are Go code that runs inside the sandbox, after
// confinement, exactly like a command: a bug in a tool is contained the
// same way.
//
// # Streams
//
// [Start] runs a command the same way, through the same child and
// confinement, but returns at once with its standard input and output as
// streams ([Process]), for a long-running server that speaks a protocol
// over them (claw mcp proxy's upstream). A zero Timeout there means no
// wall-clock limit: the context ends it. [Process.Wait] returns the Result
// Run would have.
//
// # The child
//
// Run starts a child process cloned into new user, PID, mount, IPC, UTS
// and (without a network grant) network namespaces, hands it its
// configuration and a precompiled seccomp program over a pipe, and waits.
// The child, in order: joins its v1 job cgroup itself when started on
// demand (moving only the thread that starts the command, which takes no
// lock that waits for an RCU grace period, as moving a whole process
// does); sets rlimits; makes every mount read-only and
// nosuid except the write grants (bind-mounted writable), which also stops
// chmod, chown and utimes outside them (Landlock does not cover those);
// mounts a fresh /proc; names its UTS namespace "claw"; makes a cgroup
// namespace (it is in its job cgroup by then); resolves the command;
// builds the Landlock ruleset while it still has the parent's access; switches uid/gid if asked; drops every capability
// (bounding and ambient sets emptied, securebits locked); sets
// no_new_privs; enforces Landlock (filesystem, TCP ports, abstract unix
// socket and signal scopes); loads the seccomp program (which also
// refuses every mode with the setuid or setgid bit: a sandboxed uid 0
// owns what it creates as root on the host); marks every
// inherited descriptor close-on-exec; and starts the command. Any failure
// stops it with status 126 before the command runs. It stays the PID
// namespace's init, reaps, and reports the command's status; when it
// exits, the kernel kills whatever is left in the namespace, so a timeout
// (or the end of the command) leaves no survivor, setsid and double-forked
// daemons included.
//
// The child is a small cgo-free helper, claw-sandbox, installed next to
// claw (build it from executor/cmd/claw-sandbox with CGO_ENABLED=0);
// without it the program that embeds the executor re-executes itself, and
// must then call [AllowSelfExec] and dispatch [ChildEntry] to [ChildMain]
// and [ToolEntry] to [ToolMain]. The http tool always runs in that program
// (the helper does not carry net/http). [SetHelper] names a helper
// explicitly (tests).
//
// In the helper a file tool runs in the child itself, as the PID
// namespace's init, rather than in a second program: the child applies
// the capability drop, no_new_privs and Landlock on every thread
// (syscall.AllThreadsSyscall, which a cgo program cannot use) and seccomp
// with SECCOMP_FILTER_FLAG_TSYNC, then checks every thread's status in
// /proc before the tool runs; [Applied].ToolInProcess reports it.
//
// # Network through the egress proxy
//
// A Spec with Net.Egress (unlike one with a network grant, Net.Ports)
// runs in a network namespace of its own whose only way out is claw's
// egress proxy (package egress, in this program). Run makes a unix
// socket pair and hands one end to the child as fd 6
// (child.EgressFD); the child, still holding its capabilities in its
// namespaces, brings lo up, listens on 127.0.0.1:[EgressPort], sends the
// listening socket back over the pair (SCM_RIGHTS) and closes both, so
// the command holds neither. Run wraps the socket with net.FileListener
// and serves the proxy on it; the command's Landlock domain allows a TCP
// connect to EgressPort only (and no bind), and seccomp allows only TCP
// and UDP sockets. The proxy variables (HTTP_PROXY, HTTPS_PROXY,
// ALL_PROXY and their lower-case forms, NO_PROXY empty,
// npm_config_proxy, npm_config_https_proxy, PIP_PROXY) point at it.
//
// The proxy admits exactly Egress.Hosts ("host:port"), checked before any
// name is resolved; resolves names itself; connects only to the address
// it vetted (public, or inside Egress.AllowPrivate); serves CONNECT (the
// tunnel's TLS server name must be the CONNECT host) and absolute-form
// plain HTTP; and caps idle time, bytes, open connections and request
// heads. It closes with every tunnel when the action ends, and
// [Result].Egress reports each connection: host, port, the address
// connected to, admitted or why not, bytes each way, duration, how it
// ended. The executor only reports; the caller records.
//
// A program that ignores the variables finds no resolver and no route: a
// direct connection fails in the kernel. An egress action never takes a
// prestarted child, and fails with ErrUnavailable where no network
// namespace can be made.
//
// # Prestarted children
//
// [Prestart] keeps one child started ahead of the next Run (cloned into
// its namespaces, in its cgroup, with its home directory, and otherwise
// idle, waiting for its config); Run hands it the next action without a
// network grant and starts another once the action is over. Long-lived
// programs call it; [StopPrestart] ends it. A prestarted child confines
// itself exactly as one started on demand. Its mount namespace is a copy
// made when it started: after a mount or unmount in the parent's
// namespace (seen by polling the parent's mountinfo) it is discarded.
//
// # Armed workers
//
// With Prestart on, the executor also keeps armed workers: after an
// action, a fresh child for the same confinement plan is started and
// confines itself at once (mounts, /proc, rlimits, credentials,
// Landlock, seccomp; for a file tool every thread, checked), then waits
// for its request: the command or tool, environment and directory of one
// action, which cannot widen what it was confined to (the program is
// looked up and the directory entered under that confinement; a worker
// that holds a tool's program runs only a tool). Under [RunAfter] a
// worker is handed its request and the action's input while the caller's
// ready runs; it parses the request then, and looks the program up,
// enters the directory and runs the action only after the go-ahead that
// follows once ready returned nil. The plan is everything
// the child applies before it knows the command: the launcher, the
// namespaces, the grants (read, write, protect, devices, ports), the
// rlimits and cgroup limits, the uid, the seccomp program, the minimum
// Landlock ABI and the degraded opt-in; its canonical encoding's SHA-256
// keys the worker. A worker is taken only when the action's plan is byte
// for byte the one it was confined to, it reported that confinement
// ("ready" with the ABI, capabilities dropped, the read-only remount and
// fresh /proc, the uid), it is alive, the parent's mount table has not
// changed, and every granted path still leads to the file it led to when
// the worker confined itself (a protected path created since, or a
// granted directory replaced, would make its grants differ from the
// plan's). On anything else it is discarded and the action starts its
// child as before; an action is never run less confined. Each worker
// runs one action and exits, with its own home directory, cgroup and
// namespaces, so nothing of one action reaches the next. Up to four
// plans are kept armed, three workers each; an action with an egress grant
// or streamed standard input never takes one. StopPrestart discards them
// all. With Prestart on, a finished action's home is removed in the
// background after Run returns (no later child can reach it: each has its
// own); StopPrestart waits for those removals. A replacement whose plan
// still has a ready worker starts arming a few milliseconds after the
// action, or as soon as that worker is taken, so that it does not compete
// with the caller's work right after the action (the broker's outcome
// receipt).
//
// A prestarted child is cloned by the helper acting as a relay
// (child.EntryRelay): the executor starts the relay with a clone that
// shares its memory until the exec, attaches it to the cgroup (with v1,
// an armed worker's relay joins it instead from the thread that clones
// the worker, which spares a wait for an RCU grace period), then sends
// the go-ahead; the relay clones the child into its namespaces and exits
// with its status, and its death kills the child. Cloning into a new user
// namespace straight from the executor's process would copy its page
// tables and cost it a page fault on its next write to every page of its
// heap; a child started on demand is still cloned directly, since the
// relay's own start would then be on the action's path.
//
// # Fail closed
//
// [Check] probes the kernel once (it starts one child) and reports
// [Support]. Run refuses with ErrUnavailable when the Landlock ABI is
// below Spec.MinLandlockABI (default [DefaultMinLandlockABI]), seccomp is
// unavailable, or PID and mount namespaces cannot be created. Spec.Degraded
// is the explicit opt-in to run anyway; it is reported in
// Applied.Degraded and Applied.Warnings, which the caller must record.
//
// # Environment
//
// The child's environment is an allowlist: PATH, HOME and TMPDIR (a
// private directory removed after the run), TERM=dumb, LANG, LC_ALL, TZ,
// plus Spec.Env. Names that look like credentials (…KEY…, …TOKEN…, AWS_…,
// SSH_…) are refused in Spec.Env, so the parent's secrets never reach the
// sandbox.
//
// # Limits
//
// Landlock below ABI 9 does not cover pathname unix sockets and below 10
// not UDP; seccomp refuses every socket when the network is off and only
// allows TCP and UDP sockets over AF_INET/AF_INET6 (no raw, ICMP, SCTP,
// UDP-Lite or MPTCP) when it is on. With a network
// grant there is no network namespace, so UDP is open: to port 53 only on
// ABI 10 or later, to any port and address below it (names are resolved
// inside the sandbox, over UDP, so it cannot simply be refused).
//
// Some calls get past Landlock's grants without a path or port it checks;
// the seccomp program refuses them in both network modes ([Support].Edges
// says, per kernel, what confines each): a socketpair other than unix
// stream or seqpacket (a datagram pair's sendto with a path reaches any
// host datagram socket, /dev/log or journald's; a stream pair refuses an
// address and a seqpacket pair drops it); listen (it autobinds a port
// without bind's check; a Spec grants no port to listen on, and what the
// child itself sets up before seccomp is not affected); TCP Fast Open
// (MSG_FASTOPEN in sendto, sendmsg and sendmmsg, and TCP_FASTOPEN_CONNECT,
// answered EOPNOTSUPP as by a kernel with Fast Open off, so clients fall
// back to connect). The Fast Open send connects from inside
// tcp_sendmsg_fastopen, never through the socket_connect LSM hook, so
// Landlock's TCP port rules do not see it: a known gap, reported upstream
// as landlock-lsm/linux#41 (open, no fix merged when this was written),
// and reproduced on Linux 6.18 with ABI 7 (connect refused, the Fast Open
// send to the same port connected). Read leases (F_SETLEASE, compared as the
// 32-bit int it is) are refused: a lease holder that ignores the break
// stalls host writers of the file for lease-break-time. Extended
// attributes are not read by path (getxattr, lgetxattr, listxattr,
// llistxattr, getxattrat, listxattrat: EOPNOTSUPP, as from a filesystem
// without them); fgetxattr and flistxattr stay, on a descriptor Landlock
// let open (the kernel refuses an O_PATH one). inotify is refused with
// ENOSYS (a watch names a path seccomp cannot see, and Landlock does not
// check it), so watchers poll.
//
// What stays visible outside the grants is metadata: stat, access,
// readlink, statfs and chdir work on any path, so existence, type, size,
// mode, owner, times and symlink targets can be read, while content and
// directory listings cannot. Hiding them needs a mount namespace whose
// tree holds only the grants (as bwrap builds one); bench/README.md has
// its measured cost. The cgroup namespace, which the child makes once it
// is in its job cgroup, hides every cgroup path above that (claw's own,
// and the job cgroup's name): /proc/self/cgroup shows / everywhere.
//
// RLIMIT_NPROC
// never applies to uid 0; as root the process count is bounded by a pids
// cgroup when one is writable (v2 delegated or v1), and always by the wall
// timeout. Landlock cannot deny a path inside a granted tree.
//
// Job cgroups are named claw-PID-N. Each claw process, the first time it
// looks for its cgroups (its kernel check or its first action), sweeps
// the empty groups whose PID no longer runs (a claw killed with SIGKILL);
// a group that still holds a process is never touched.
package executor
