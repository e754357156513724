package claw.gate_test

# Destructive rules must deny even with everything else opened up: no
# workspace confinement, nothing forbidden, full autonomy, and the
# passphrase offered for every rule id and risk.
loose := {
	"workspace_only": false,
	"forbidden_paths": [],
	"forbidden_commands": [],
	"allowed_commands": ["*"],
	"allow_privilege_escalation": true,
	"passphrase_enabled": true,
	"passphrase_for": [
		"low", "medium", "high", "critical",
		"destructive.rm_root", "destructive.find_delete", "destructive.mkfs",
		"destructive.dd_device", "destructive.block_device",
		"destructive.fork_bomb", "destructive.power",
		"destructive.recursive_chmod", "destructive.chmod_system",
		"destructive.download_to_shell", "destructive.kill_all",
		"destructive.kernel_write", "destructive.system_file_write",
		"destructive.crontab_remove", "destructive.move_critical",
	],
}

# d(id, cmds) is a case where rule id must deny cmds at full autonomy
# under the loose configuration, as a critical reason.
d(id, cmds) := {"id": id, "input": at(sh(cmds), "full"), "config": loose, "decision": "deny", "risk": "critical", "severity": "critical"}

# ok(id, cmds) is a case where rule id must stay quiet for cmds.
ok(id, cmds) := ok_input(id, at(sh(cmds), "full"))

ok_input(id, act) := {"id": id, "input": act, "config": loose}

rmrf(paths) := cmd(array.concat(["rm", "-rf"], paths), ["r", "f"], paths)

destructive_fires := {
	"destructive.rm_root: rm -rf /": d("destructive.rm_root", [rmrf(["/"])]),
	"destructive.rm_root: rm -r -f /": d("destructive.rm_root", [cmd(["rm", "-r", "-f", "/"], ["r", "f"], ["/"])]),
	"destructive.rm_root: rm --recursive --force /": d("destructive.rm_root", [cmd(["rm", "--recursive", "--force", "/"], ["recursive", "force"], ["/"])]),
	"destructive.rm_root: rm -R": d("destructive.rm_root", [cmd(["rm", "-R", "/usr"], ["R"], ["/usr"])]),
	"destructive.rm_root: rm -rf /*": d("destructive.rm_root", [rmrf(["/*"])]),
	"destructive.rm_root: cd / && rm -rf * (cwd tracked)": d("destructive.rm_root", [cmd(["cd", "/"], [], ["/"]), rmrf(["/*"])]),
	"destructive.rm_root: top-level directory": d("destructive.rm_root", [rmrf(["/data"])]),
	"destructive.rm_root: system directory": d("destructive.rm_root", [rmrf(["/usr/lib"])]),
	"destructive.rm_root: home": d("destructive.rm_root", [rmrf(["/home/u"])]),
	"destructive.rm_root: home contents": d("destructive.rm_root", [rmrf(["/home/u/*"])]),
	"destructive.rm_root: ancestor of home": d("destructive.rm_root", [rmrf(["/home"])]),
	"destructive.rm_root: .. out of the workspace": d("destructive.rm_root", [rmrf(["/home/u"]), rmrf(["/home/u/ws/build"])]),
	"destructive.rm_root: ancestor of a deep workspace": {
		"id": "destructive.rm_root",
		"input": object.union(at(sh([rmrf(["/srv/a/b"])]), "full"), {"context": {"workspace": "/srv/a/b/c/ws"}}),
		"config": loose,
		"decision": "deny",
	},
	"destructive.rm_root: --no-preserve-root": d("destructive.rm_root", [cmd(["rm", "--no-preserve-root", "x"], ["no-preserve-root"], ["/home/u/ws/x"])]),
	"destructive.rm_root: through sudo and bash -c": d("destructive.rm_root", [object.union(sudo(rmrf(["/"])), {"via": ["sudo", "bash -c"], "depth": 1})]),
	"destructive.rm_root: at supervised too": {"id": "destructive.rm_root", "input": sh([rmrf(["/"])]), "decision": "deny"},
	"destructive.find_delete: find / -delete": d("destructive.find_delete", [cmd(["find", "/", "-delete"], ["delete"], ["/"])]),
	"destructive.find_delete: find ~ -exec rm": d("destructive.find_delete", [cmd(["find", "/home/u", "-type", "f", "-exec", "rm", "{}", "+"], ["type", "exec"], ["/home/u"]), cmd(["rm", "{}"], [], ["/home/u/ws/{}"])]),
	"destructive.find_delete: -execdir /bin/rm": d("destructive.find_delete", [cmd(["find", "/etc", "-execdir", "/bin/rm", "-f", "{}", ";"], ["execdir"], ["/etc"])]),
	"destructive.find_delete: no start point in /": {
		"id": "destructive.find_delete",
		"input": object.union(at(sh([cmd(["find", "-delete"], ["delete"], [])]), "full"), {"context": {"cwd": "/"}}),
		"config": loose,
		"decision": "deny",
	},
	"destructive.mkfs: mkfs": d("destructive.mkfs", [cmd(["mkfs", "-t", "ext4", "/dev/sdb1"], ["t"], ["/dev/sdb1"])]),
	"destructive.mkfs: mkfs.ext4": d("destructive.mkfs", [cmd(["mkfs.ext4", "/dev/sdb1"], [], ["/dev/sdb1"])]),
	"destructive.mkfs: mkfs.xfs on an image": d("destructive.mkfs", [cmd(["mkfs.xfs", "img"], [], ["/home/u/ws/img"])]),
	"destructive.mkfs: wipefs": d("destructive.mkfs", [cmd(["wipefs", "-a", "/dev/vda"], ["a"], ["/dev/vda"])]),
	"destructive.dd_device: of=/dev/sda": d("destructive.dd_device", [cmd(["dd", "if=/dev/zero", "of=/dev/sda", "bs=1M"], [], [])]),
	"destructive.dd_device: of=/dev/nvme0n1": d("destructive.dd_device", [cmd(["dd", "of=/dev/nvme0n1"], [], [])]),
	"destructive.block_device: redirect to a disk": d("destructive.block_device", [cmd(["echo", "x"], [], []), c({"name": "cat", "argv": ["cat"], "writes": ["/dev/sda"]})]),
	"destructive.block_device: redirection in the analysis": {
		"id": "destructive.block_device",
		"input": at(redirect(sh([cmd(["cat", "img"], [], ["/home/u/ws/img"])]), ">", "/dev/nvme0n1p1"), "full"),
		"config": loose,
		"decision": "deny",
	},
	"destructive.block_device: tee": d("destructive.block_device", [cmd(["tee", "/dev/mmcblk0"], [], ["/dev/mmcblk0"])]),
	"destructive.block_device: cp onto a device": d("destructive.block_device", [cmd(["cp", "img", "/dev/vdb"], [], ["/home/u/ws/img", "/dev/vdb"])]),
	"destructive.block_device: dd of= loop device": d("destructive.block_device", [cmd(["dd", "of=/dev/loop0"], [], [])]),
	"destructive.block_device: device mapper": d("destructive.block_device", [c({"name": "cat", "argv": ["cat"], "writes": ["/dev/mapper/root"]})]),
	"destructive.block_device: kernel memory": d("destructive.block_device", [c({"name": "cat", "argv": ["cat"], "writes": ["/dev/mem"]})]),
	"destructive.fork_bomb: analysis flag": {
		"id": "destructive.fork_bomb",
		"input": at(shp([cmd([":"], [], [])], {"fork_bomb": true}), "full"),
		"config": loose,
		"decision": "deny",
		"risk": "critical",
	},
	"destructive.power: shutdown": d("destructive.power", [cmd(["shutdown", "-h", "now"], ["h"], [])]),
	"destructive.power: reboot": d("destructive.power", [cmd(["reboot"], [], [])]),
	"destructive.power: halt": d("destructive.power", [cmd(["halt"], [], [])]),
	"destructive.power: poweroff": d("destructive.power", [cmd(["poweroff"], [], [])]),
	"destructive.power: kexec": d("destructive.power", [cmd(["kexec", "-e"], ["e"], [])]),
	"destructive.power: init 0": d("destructive.power", [cmd(["init", "0"], [], [])]),
	"destructive.power: telinit 6": d("destructive.power", [cmd(["telinit", "6"], [], [])]),
	"destructive.power: systemctl poweroff": d("destructive.power", [cmd(["systemctl", "poweroff"], [], [])]),
	"destructive.power: systemctl --force reboot": d("destructive.power", [cmd(["systemctl", "--force", "reboot"], ["force"], [])]),
	"destructive.power: systemctl kexec": d("destructive.power", [cmd(["systemctl", "kexec"], [], [])]),
	"destructive.power: systemctl rescue": d("destructive.power", [cmd(["systemctl", "rescue"], [], [])]),
	"destructive.power: systemctl emergency": d("destructive.power", [cmd(["systemctl", "emergency"], [], [])]),
	"destructive.power: systemctl isolate rescue.target": d("destructive.power", [cmd(["systemctl", "isolate", "rescue.target"], [], [])]),
	"destructive.power: busybox reboot": d("destructive.power", [object.union(cmd(["reboot"], [], []), {"via": ["busybox"]})]),
	"destructive.recursive_chmod: chmod -R 777 /": d("destructive.recursive_chmod", [cmd(["chmod", "-R", "777", "/"], ["R"], ["/"])]),
	"destructive.recursive_chmod: chown -R on /etc": d("destructive.recursive_chmod", [cmd(["chown", "-R", "u:u", "/etc"], ["R"], ["/etc"])]),
	"destructive.recursive_chmod: chgrp --recursive on home": d("destructive.recursive_chmod", [cmd(["chgrp", "--recursive", "g", "/home/u"], ["recursive"], ["/home/u"])]),
	"destructive.recursive_chmod: chown -R on /usr/*": d("destructive.recursive_chmod", [cmd(["chown", "-R", "u", "/usr/*"], ["R"], ["/usr/*"])]),
	"destructive.chmod_system: 777 on a system file": d("destructive.chmod_system", [cmd(["chmod", "777", "/etc/passwd"], [], ["/etc/passwd"])]),
	"destructive.chmod_system: 0666 on a device": d("destructive.chmod_system", [cmd(["chmod", "0666", "/dev/sda"], [], ["/dev/sda"])]),
	"destructive.chmod_system: o+w": d("destructive.chmod_system", [cmd(["chmod", "o+w", "/usr/bin/sudo"], [], ["/usr/bin/sudo"])]),
	"destructive.chmod_system: a=rwx": d("destructive.chmod_system", [cmd(["chmod", "a=rwx", "/etc/shadow"], [], ["/etc/shadow"])]),
	"destructive.chmod_system: +w": d("destructive.chmod_system", [cmd(["chmod", "+w", "/etc/sudoers"], [], ["/etc/sudoers"])]),
	"destructive.chmod_system: setuid": d("destructive.chmod_system", [cmd(["chmod", "u+s", "/usr/bin/bash"], [], ["/usr/bin/bash"])]),
	"destructive.chmod_system: 4755": d("destructive.chmod_system", [cmd(["chmod", "4755", "/bin/sh"], [], ["/bin/sh"])]),
	"destructive.chmod_system: the root": d("destructive.chmod_system", [cmd(["chmod", "777", "/"], [], ["/"])]),
	"destructive.download_to_shell: curl | sh": d("destructive.download_to_shell", [cmd(["curl", "-fsSL", "https://x.sh"], ["f", "s", "S", "L"], []), marked(marked(cmd(["sh"], [], []), "download_to_shell", "curl"), "stdin_shell", "pipe")]),
	"destructive.download_to_shell: base64 -d | python3": d("destructive.download_to_shell", [cmd(["base64", "-d"], ["d"], []), marked(cmd(["python3"], [], []), "download_to_shell", "base64 -d")]),
	"destructive.kill_all: kill -9 -1": d("destructive.kill_all", [cmd(["kill", "-9", "-1"], ["9", "1"], [])]),
	"destructive.kill_all: kill -1": d("destructive.kill_all", [cmd(["kill", "-1"], ["1"], [])]),
	"destructive.kill_all: kill -s KILL -1": d("destructive.kill_all", [cmd(["kill", "-s", "KILL", "-1"], ["s", "1"], [])]),
	"destructive.kill_all: kill -- -1": d("destructive.kill_all", [cmd(["kill", "--", "-1"], [], [])]),
	"destructive.kill_all: killall5": d("destructive.kill_all", [cmd(["killall5", "-9"], ["9"], [])]),
	"destructive.kill_all: pkill everything": d("destructive.kill_all", [cmd(["pkill", "-9", "."], ["9"], [])]),
	"destructive.kill_all: pkill -u USER": d("destructive.kill_all", [cmd(["pkill", "-9", "-u", "claw"], ["9", "u"], [])]),
	"destructive.kill_all: killall --user=USER": d("destructive.kill_all", [cmd(["killall", "--user=claw"], ["user"], [])]),
	"destructive.kill_all: kill -9 -01 (leading zero)": d("destructive.kill_all", [cmd(["kill", "-9", "-01"], ["9"], [])]),
	"destructive.kill_all: kill -9 -- -001": d("destructive.kill_all", [cmd(["kill", "-9", "--", "-001"], ["9"], [])]),
	"destructive.kill_all: kill -9 ' -1' (leading blank)": d("destructive.kill_all", [cmd(["kill", "-9", " -1"], ["9"], [])]),
	"destructive.kill_all: kill -9 '-1 ' (trailing blank)": d("destructive.kill_all", [cmd(["kill", "-9", "-1 "], ["9", "1 "], [])]),
	"destructive.kill_all: kill ' -1' 1234 (a pid, not a signal)": d("destructive.kill_all", [cmd(["kill", " -1", "1234"], [], [])]),
	"destructive.kill_all: kill -s KILL -01": d("destructive.kill_all", [cmd(["kill", "-s", "KILL", "-01"], ["s"], [])]),
	"destructive.kill_all: kill -9 1 (init)": d("destructive.kill_all", [cmd(["kill", "-9", "1"], ["9"], [])]),
	"destructive.kill_all: kill +1": d("destructive.kill_all", [cmd(["kill", "+1"], [], [])]),
	"destructive.kill_all: kill -s HUP 01": d("destructive.kill_all", [cmd(["kill", "-s", "HUP", "01"], ["s"], [])]),
	"destructive.kill_all: pkill -9 'x*'": d("destructive.kill_all", [cmd(["pkill", "-9", "x*"], ["9"], [])]),
	"destructive.kill_all: pkill '[a-z]*'": d("destructive.kill_all", [cmd(["pkill", "[a-z]*"], [], [])]),
	"destructive.kill_all: pkill -f 'a|'": d("destructive.kill_all", [cmd(["pkill", "-f", "a|"], ["f"], [])]),
	"destructive.kill_all: pkill -f ./server": d("destructive.kill_all", [cmd(["pkill", "-f", "./server"], ["f"], [])]),
	"destructive.kill_all: pkill e (a short pattern)": d("destructive.kill_all", [cmd(["pkill", "e"], [], [])]),
	"destructive.kill_all: pkill -HUP '.*' (signal before the pattern)": d("destructive.kill_all", [cmd(["pkill", "-HUP", ".*"], ["H", "U", "P"], [])]),
	"destructive.kill_all: pkill -- -f (pattern after --)": d("destructive.kill_all", [cmd(["pkill", "--", "-f"], [], [])]),
	"destructive.kill_all: pkill --inverse": d("destructive.kill_all", [cmd(["pkill", "--inverse", "myserver"], ["inverse"], [])]),
	"destructive.kill_all: pkill --inv (abbreviated)": d("destructive.kill_all", [cmd(["pkill", "--inv", "myserver"], ["inv"], [])]),
	"destructive.kill_all: pkill -fu root (clustered)": d("destructive.kill_all", [cmd(["pkill", "-fu", "root"], ["f", "u"], [])]),
	"destructive.kill_all: pkill -u0 (attached)": d("destructive.kill_all", [cmd(["pkill", "-u0"], ["u"], [])]),
	"destructive.kill_all: pkill --euid=0": d("destructive.kill_all", [cmd(["pkill", "--euid=0"], ["euid"], [])]),
	"destructive.kill_all: pkill -SIGKILL -G 0": d("destructive.kill_all", [cmd(["pkill", "-SIGKILL", "-G", "0"], ["S", "I", "G"], [])]),
	"destructive.kill_all: pkill -O 5": d("destructive.kill_all", [cmd(["pkill", "-O", "5"], ["O"], [])]),
	"destructive.kill_all: pkill --ns 1": d("destructive.kill_all", [cmd(["pkill", "--ns", "1"], ["ns"], [])]),
	"destructive.kill_all: pkill -9 -P 1": d("destructive.kill_all", [cmd(["pkill", "-9", "-P", "1"], ["9", "P"], [])]),
	"destructive.kill_all: pkill -P1": d("destructive.kill_all", [cmd(["pkill", "-P1"], ["P"], [])]),
	"destructive.kill_all: pkill --parent=0,1": d("destructive.kill_all", [cmd(["pkill", "--parent=0,1"], ["parent"], [])]),
	"destructive.kill_all: killall -r .": d("destructive.kill_all", [cmd(["killall", "-r", "."], ["r"], [])]),
	"destructive.kill_all: killall --regexp '^'": d("destructive.kill_all", [cmd(["killall", "-s", "KILL", "--regexp", "^"], ["s", "regexp"], [])]),
	"destructive.kill_all: killall -u root": d("destructive.kill_all", [cmd(["killall", "-u", "root"], ["u"], [])]),
	"destructive.kill_all: killall -o 1h": d("destructive.kill_all", [cmd(["killall", "-o", "1h"], ["o"], [])]),
	"destructive.kill_all: killall ''": d("destructive.kill_all", [cmd(["killall", ""], [], [])]),
	"destructive.kill_all: skill -KILL -u USER": d("destructive.kill_all", [cmd(["skill", "-KILL", "-u", "claw"], ["K", "I", "L", "L", "u"], [])]),
	"destructive.kill_all: skill -9 NAME": d("destructive.kill_all", [cmd(["skill", "-9", "claw"], ["9"], [])]),
	"destructive.kill_all: loginctl terminate-user": d("destructive.kill_all", [cmd(["loginctl", "terminate-user", "claw"], [], [])]),
	"destructive.kill_all: loginctl kill-session": d("destructive.kill_all", [cmd(["loginctl", "--signal=KILL", "kill-session", "3"], ["signal"], [])]),
	"destructive.kernel_write: /proc/sys": d("destructive.kernel_write", [c({"name": "echo", "argv": ["echo", "1"], "writes": ["/proc/sys/kernel/panic"]})]),
	"destructive.kernel_write: sysrq-trigger": d("destructive.kernel_write", [c({"name": "echo", "argv": ["echo", "b"], "writes": ["/proc/sysrq-trigger"]})]),
	"destructive.kernel_write: /sys": d("destructive.kernel_write", [cmd(["tee", "/sys/class/leds/x/brightness"], [], ["/sys/class/leds/x/brightness"])]),
	"destructive.kernel_write: sysctl -w": d("destructive.kernel_write", [cmd(["sysctl", "-w", "kernel.panic=1"], ["w"], [])]),
	"destructive.kernel_write: sysctl key=value": d("destructive.kernel_write", [cmd(["sysctl", "vm.overcommit_memory=1"], [], [])]),
	"destructive.system_file_write: truncate /etc": d("destructive.system_file_write", [c({"name": ":", "argv": [":"], "writes": ["/etc/passwd"]})]),
	"destructive.system_file_write: touch in /usr/bin": d("destructive.system_file_write", [cmd(["touch", "/usr/bin/ls"], [], ["/usr/bin/ls"])]),
	"destructive.system_file_write: cp into /boot": d("destructive.system_file_write", [cmd(["cp", "k", "/boot/vmlinuz"], [], ["/home/u/ws/k", "/boot/vmlinuz"])]),
	"destructive.system_file_write: file_write": {
		"id": "destructive.system_file_write",
		"input": at(write("file_write", ["/etc/sudoers.d/x"]), "full"),
		"config": loose,
		"decision": "deny",
	},
	"destructive.system_file_write: a workspace of /var/lib": {
		"id": "destructive.system_file_write",
		"input": at(object.union(write("file_write", ["/var/lib/dpkg/status"]), {"context": {"workspace": "/var/lib", "cwd": "/var/lib"}}), "full"),
		"config": loose,
		"decision": "deny",
	},
	"destructive.system_file_write: beside a workspace under /var/lib": {
		"id": "destructive.system_file_write",
		"input": at(object.union(write("file_write", ["/var/lib/dpkg/status"]), {"context": {"workspace": "/var/lib/claw/workspace", "cwd": "/var/lib/claw/workspace"}}), "full"),
		"config": loose,
		"decision": "deny",
	},
	"destructive.crontab_remove: crontab -r": d("destructive.crontab_remove", [cmd(["crontab", "-r"], ["r"], [])]),
	"destructive.crontab_remove: crontab -ir": d("destructive.crontab_remove", [cmd(["crontab", "-ir"], ["i", "r"], [])]),
	"destructive.move_critical: mv /usr away": d("destructive.move_critical", [cmd(["mv", "/usr", "/tmp/gone"], [], ["/usr", "/tmp/gone"])]),
	"destructive.move_critical: mv home away": d("destructive.move_critical", [cmd(["mv", "/home/u", "/tmp/gone"], [], ["/home/u", "/tmp/gone"])]),
	"destructive.move_critical: mv -t with / as a source": d("destructive.move_critical", [cmd(["mv", "-t", "/tmp/x", "/"], ["t"], ["/", "/tmp/x"])]),
	"destructive.move_critical: rsync --delete into /": d("destructive.move_critical", [cmd(["rsync", "-a", "--delete", "./empty/", "/"], ["a", "delete"], ["/home/u/ws/empty", "/"])]),
	"destructive.move_critical: rsync --delete-after into /etc": d("destructive.move_critical", [cmd(["rsync", "-a", "--delete-after", "x/", "/etc"], ["a", "delete-after"], ["/home/u/ws/x", "/etc"])]),
	"destructive.move_critical: rsync --remove-source-files from /usr": d("destructive.move_critical", [cmd(["rsync", "-a", "--remove-source-files", "/usr", "/tmp/x"], ["a", "remove-source-files"], ["/usr", "/tmp/x"])]),
	"destructive.recursive_chmod: setfacl -R on /": d("destructive.recursive_chmod", [cmd(["setfacl", "-R", "-m", "u:x:rwx", "/"], ["R", "m"], ["/"])]),
	"destructive.recursive_chmod: chattr -R on /etc": d("destructive.recursive_chmod", [cmd(["chattr", "-R", "+i", "/etc"], ["R"], ["/etc"])]),
}

destructive_quiet := {
	"destructive.system_file_write: in a workspace under /var/lib": ok_input("destructive.system_file_write", at(object.union(write("file_write", ["/var/lib/claw/workspace/notes.md"]), {"context": {"workspace": "/var/lib/claw/workspace", "cwd": "/var/lib/claw/workspace"}}), "full")),
	"destructive.rm_root: rm -rf ./build": ok("destructive.rm_root", [rmrf(["/home/u/ws/build"])]),
	"destructive.rm_root: non-recursive rm of a top-level file": ok("destructive.rm_root", [cmd(["rm", "/swapfile"], [], ["/swapfile"])]),
	"destructive.rm_root: rm -rf in /tmp": ok("destructive.rm_root", [rmrf(["/tmp/build"])]),
	"destructive.rm_root: rm -rf of a sibling of the workspace": ok("destructive.rm_root", [rmrf(["/home/u/other"])]),
	"destructive.rm_root: echo rm -rf /": ok("destructive.rm_root", [cmd(["echo", "rm", "-rf", "/"], ["r", "f"], [])]),
	"destructive.find_delete: find in the workspace": ok("destructive.find_delete", [cmd(["find", ".", "-name", "*.o", "-delete"], ["name", "delete"], ["/home/u/ws"])]),
	"destructive.find_delete: find / without deleting": ok("destructive.find_delete", [cmd(["find", "/", "-name", "x"], ["name"], ["/"])]),
	"destructive.find_delete: find / -exec grep": ok("destructive.find_delete", [cmd(["find", "/", "-exec", "grep", "x", "{}", ";"], ["exec"], ["/"])]),
	"destructive.mkfs: grep mkfs": ok("destructive.mkfs", [cmd(["grep", "mkfs", "notes"], [], ["/home/u/ws/notes"])]),
	"destructive.mkfs: mkdir": ok("destructive.mkfs", [cmd(["mkdir", "mkfs"], [], ["/home/u/ws/mkfs"])]),
	"destructive.dd_device: of=/dev/null": ok("destructive.dd_device", [cmd(["dd", "if=/dev/zero", "of=/dev/null", "count=1"], [], [])]),
	"destructive.dd_device: of a file": ok("destructive.dd_device", [cmd(["dd", "if=/dev/sda", "of=img"], [], [])]),
	"destructive.block_device: reading a device": ok("destructive.block_device", [cmd(["cat", "/dev/sda"], [], ["/dev/sda"])]),
	"destructive.block_device: writing /dev/null": ok("destructive.block_device", [c({"name": "ls", "argv": ["ls"], "writes": ["/dev/null"]})]),
	"destructive.block_device: a file named like a device": ok("destructive.block_device", [c({"name": "ls", "argv": ["ls"], "writes": ["/home/u/ws/dev/sda"]})]),
	"destructive.fork_bomb: a function": ok("destructive.fork_bomb", [cmd(["f"], [], [])]),
	"destructive.power: systemctl status reboot": ok("destructive.power", [cmd(["systemctl", "status", "reboot.target"], [], [])]),
	"destructive.power: systemctl restart nginx": ok("destructive.power", [cmd(["systemctl", "restart", "nginx"], [], [])]),
	"destructive.power: init 3": ok("destructive.power", [cmd(["init", "3"], [], [])]),
	"destructive.power: echo reboot": ok("destructive.power", [cmd(["echo", "reboot"], [], [])]),
	"destructive.recursive_chmod: chmod -R in the workspace": ok("destructive.recursive_chmod", [cmd(["chmod", "-R", "755", "build"], ["R"], ["/home/u/ws/build"])]),
	"destructive.recursive_chmod: non-recursive chown of /etc": ok("destructive.recursive_chmod", [cmd(["chown", "u", "/etc"], [], ["/etc"])]),
	"destructive.chmod_system: 755 on a system file": ok("destructive.chmod_system", [cmd(["chmod", "755", "/usr/bin/x"], [], ["/usr/bin/x"])]),
	"destructive.chmod_system: 777 in the workspace": ok("destructive.chmod_system", [cmd(["chmod", "777", "x"], [], ["/home/u/ws/x"])]),
	"destructive.chmod_system: u+w on a system file": ok("destructive.chmod_system", [cmd(["chmod", "u+w", "/etc/x"], [], ["/etc/x"])]),
	"destructive.chmod_system: g-w": ok("destructive.chmod_system", [cmd(["chmod", "go-w", "/etc/x"], [], ["/etc/x"])]),
	"destructive.download_to_shell: curl to a file": ok("destructive.download_to_shell", [cmd(["curl", "-o", "x", "https://e"], ["o"], ["/home/u/ws/x"])]),
	"destructive.kill_all: kill a pid": ok("destructive.kill_all", [cmd(["kill", "-9", "1234"], ["9"], [])]),
	"destructive.kill_all: kill -1 as a signal": ok("destructive.kill_all", [cmd(["kill", "-1", "1234"], ["1"], [])]),
	"destructive.kill_all: pkill a name": ok("destructive.kill_all", [cmd(["pkill", "-f", "server.py"], ["f"], [])]),
	"destructive.kill_all: pkill a name of a user": ok("destructive.kill_all", [cmd(["pkill", "-u", "claw", "server"], ["u"], [])]),
	"destructive.kill_all: killall --user=USER a name": ok("destructive.kill_all", [cmd(["killall", "--user=claw", "server"], ["user"], [])]),
	"destructive.kill_all: kill -9 -0x1 (no kill reads hex)": ok("destructive.kill_all", [cmd(["kill", "-9", "-0x1"], ["9", "0x1"], [])]),
	"destructive.kill_all: kill -01 1234 (HUP)": ok("destructive.kill_all", [cmd(["kill", "-01", "1234"], ["01"], [])]),
	"destructive.kill_all: kill -s 1 1234 (HUP)": ok("destructive.kill_all", [cmd(["kill", "-s", "1", "1234"], ["s"], [])]),
	"destructive.kill_all: kill -l 1 (a signal name)": ok("destructive.kill_all", [cmd(["kill", "-l", "1"], ["l"], [])]),
	"destructive.kill_all: kill a process group": ok("destructive.kill_all", [cmd(["kill", "--", "-12345"], [], [])]),
	"destructive.kill_all: kill 10 and 11": ok("destructive.kill_all", [cmd(["kill", "10", "11", "-100"], [], [])]),
	"destructive.kill_all: pkill a plain name": ok("destructive.kill_all", [cmd(["pkill", "myserver"], [], [])]),
	"destructive.kill_all: pkill -f a command line": ok("destructive.kill_all", [cmd(["pkill", "-9", "-f", "python3 server.py"], ["9", "f"], [])]),
	"destructive.kill_all: pkill -x a short name": ok("destructive.kill_all", [cmd(["pkill", "-x", "sh"], ["x"], [])]),
	"destructive.kill_all: pkill -HUP a name": ok("destructive.kill_all", [cmd(["pkill", "-HUP", "nginx"], ["H", "U", "P"], [])]),
	"destructive.kill_all: pkill -O 5 a name": ok("destructive.kill_all", [cmd(["pkill", "-O", "5", "myserver"], ["O"], [])]),
	"destructive.kill_all: pkill the children of a pid": ok("destructive.kill_all", [cmd(["pkill", "-P", "4242"], ["P"], [])]),
	"destructive.kill_all: pkill -USR1 -F pidfile": ok("destructive.kill_all", [cmd(["pkill", "-USR1", "-F", "run/app.pid"], ["U", "S", "R", "1", "F"], [])]),
	"destructive.kill_all: killall a name with a star (no -r)": ok("destructive.kill_all", [cmd(["killall", "x*"], [], [])]),
	"destructive.kill_all: killall -r a name": ok("destructive.kill_all", [cmd(["killall", "-r", "myserver"], ["r"], [])]),
	"destructive.kill_all: skill -l": ok("destructive.kill_all", [cmd(["skill", "-l"], ["l"], [])]),
	"destructive.kill_all: skill -n (no action)": ok("destructive.kill_all", [cmd(["skill", "-n", "-u", "claw"], ["n", "u"], [])]),
	"destructive.kill_all: loginctl list-users": ok("destructive.kill_all", [cmd(["loginctl", "list-users"], [], [])]),
	"destructive.kernel_write: reading /proc/sys": ok("destructive.kernel_write", [cmd(["cat", "/proc/sys/kernel/ostype"], [], ["/proc/sys/kernel/ostype"])]),
	"destructive.kernel_write: sysctl read": ok("destructive.kernel_write", [cmd(["sysctl", "kernel.ostype"], [], [])]),
	"destructive.kernel_write: a path that looks like /sys": ok("destructive.kernel_write", [c({"name": "ls", "argv": ["ls"], "writes": ["/system/x", "/home/u/ws/sys/x"]})]),
	"destructive.system_file_write: reading /etc": ok("destructive.system_file_write", [cmd(["cat", "/etc/hostname"], [], ["/etc/hostname"])]),
	"destructive.system_file_write: writing the workspace": ok("destructive.system_file_write", [c({"name": "ls", "argv": ["ls"], "writes": ["/home/u/ws/etc/x"]})]),
	"destructive.crontab_remove: crontab -l": ok("destructive.crontab_remove", [cmd(["crontab", "-l"], ["l"], [])]),
	"destructive.move_critical: mv a file into /tmp": ok("destructive.move_critical", [cmd(["mv", "/home/u/ws/x", "/tmp"], [], ["/home/u/ws/x", "/tmp"])]),
	"destructive.move_critical: mv inside the workspace": ok("destructive.move_critical", [cmd(["mv", "a", "b"], [], ["/home/u/ws/a", "/home/u/ws/b"])]),
	"destructive.move_critical: rsync --delete into the workspace": ok("destructive.move_critical", [cmd(["rsync", "-a", "--delete", "/usr/share/doc/", "docs/"], ["a", "delete"], ["/usr/share/doc", "/home/u/ws/docs"])]),
	"destructive.move_critical: rsync from /usr without deleting": ok("destructive.move_critical", [cmd(["rsync", "-a", "/usr/", "/home/u/ws/usr"], ["a"], ["/usr", "/home/u/ws/usr"])]),
	"destructive.recursive_chmod: setfacl on a workspace file": ok("destructive.recursive_chmod", [cmd(["setfacl", "-m", "u:x:r", "f"], ["m"], ["/home/u/ws/f"])]),
}

# The loose configuration really is loose: harmless commands are allowed
# outright, so the fires cases above are denied by their rule alone.
test_loose_config_allows_harmless_commands if {
	cfg := object.union(loose, {"passphrase_enabled": false})
	decide(at(sh([ls]), "full"), cfg).decision == "allow"
	decide(at(sh([rmrf(["/home/u/ws/build"])]), "full"), cfg).decision == "allow"
	decide(at(sh([cmd(["chmod", "777", "x"], [], ["/home/u/ws/x"])]), "full"), cfg).decision == "allow"
}

# Each destructive case is denied by its own rule: removing that reason
# leaves nothing else that denies, except where a case is also caught by a
# second destructive rule.
test_destructive_fires if {
	failing := {note |
		some note, tc in destructive_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_destructive_quiet if {
	failing := {note |
		some note, tc in destructive_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}

# destroy_rules, a literal table for speed, leads every program a rule of
# destructive_commands looks at to that rule, and every program it lists
# is in the destroy family: a program left out would skip its rule.
test_destroy_rules_lead_to_the_rules if {
	wants := {
		"rm_root": {"rm"},
		"find_delete": {"find"},
		"dd_device": {"dd"},
		"recursive_chmod": {"chmod", "chown", "chgrp", "setfacl", "chattr"},
		"chmod_system": {"chmod"},
		"crontab_remove": {"crontab"},
		"move_critical": {"mv", "rsync"},
		"mkfs": data.claw.gate.mkfs_names,
		"power": data.claw.gate.power_commands,
		"kill_all": data.claw.gate.kill_names,
	}
	every rule, names in wants {
		every n in names {
			rule in data.claw.gate.destroy_rules[n]
		}
	}
	every n, rules in data.claw.gate.destroy_rules {
		"destroy" in data.claw.gate.program_families[n]
		every rule in rules {
			n in wants[rule]
		}
	}
}
