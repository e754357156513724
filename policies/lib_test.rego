package claw.lib_test

import data.claw.lib

test_reason if {
	lib.reason({"custom": {"id": "a.b", "severity": "high"}, "title": "t"}, "m") == {"id": "a.b", "severity": "high", "msg": "m"}
}

test_severities if {
	every i, name in lib.severity_names {
		lib.severity_rank[name] == i
	}
}

test_dir_slash if {
	lib.dir_slash("/a") == "/a/"
	lib.dir_slash("/a/") == "/a/"
	lib.dir_slash("/") == "/"
}

test_under if {
	lib.under("/a", "/a")
	lib.under("/a/b", "/a")
	lib.under("/a/b", "/")
	not lib.under("/ab", "/a")
	not lib.under("/a", "/a/b")
}

test_under_any if {
	lib.under_any("/a/b", ["/x", "/a"])
	lib.under_any("/x", ["/x"])
	not lib.under_any("/ab", ["/a"])
	not lib.under_any("/a", [])
}

test_safe_devices if {
	lib.safe_devices["/dev/null"]
	not lib.safe_devices["/dev/sda"]
}

test_has_glob if {
	lib.has_glob("/a/*")
	lib.has_glob("/a/b?")
	lib.has_glob("/a/[ab]")
	not lib.has_glob("/a/{b}")
}

test_glob_base if {
	lib.glob_base("/a/b") == "/a/b"
	lib.glob_base("/usr/*") == "/usr"
	lib.glob_base("/*") == "/"
	lib.glob_base("/u*/bin") == "/"
	lib.glob_base("/ws/a*.txt") == "/ws"
	lib.glob_base("/ws/x/?/y") == "/ws/x"
}

test_segments_may_match if {
	lib.segments_may_match("/home/u/.s*/id_rsa", "/home/u/.ssh")
	lib.segments_may_match("/home/*", "/home/u/.ssh")
	lib.segments_may_match("/x/*/y", "/x/*/y")
	not lib.segments_may_match("/home/u/ws/*.txt", "/home/u/ws/secrets")
	not lib.segments_may_match("/etc/*", "/home/u/.ssh")
}

test_basename if {
	lib.basename("/bin/rm") == "rm"
	lib.basename("rm") == "rm"
	lib.basename("/") == ""
}

test_is_ancestor if {
	lib.is_ancestor("/a", "/a/b")
	lib.is_ancestor("/", "/a")
	not lib.is_ancestor("/a", "/a")
	not lib.is_ancestor("/a", "/ab")
}

cmd := {"name": "rm", "opts": ["r", "f"], "marks": [{"kind": "privilege", "detail": "sudo"}]}

test_options if {
	lib.has_opt(cmd, "r")
	not lib.has_opt(cmd, "R")
	lib.has_any_opt(cmd, {"x", "f"})
	not lib.has_any_opt(cmd, {"x"})
	not lib.has_opt({"opts": null}, "r")
	lib.recursive(cmd)
	lib.recursive({"opts": ["recursive"]})
	not lib.recursive({"opts": ["f"]})
}

test_marks if {
	lib.has_mark(cmd, "privilege")
	not lib.has_mark(cmd, "inline_code")
	lib.has_marks(cmd)
	not lib.has_marks({"marks": []})
	not lib.has_marks({"marks": null})
}

test_dangerous_mode if {
	every m in ["777", "0777", "666", "o+w", "a+rwx", "+w", "a=rwx", "ug+x,o+w", "u+s", "g+s", "4755", "2755", "6755"] {
		lib.dangerous_mode(m)
	}
	every m in ["755", "0644", "u+w", "g+w", "go-w", "u+x", "1755", "700", "-w"] {
		not lib.dangerous_mode(m)
	}
}
