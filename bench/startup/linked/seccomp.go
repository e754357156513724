//go:build seccomp

package main

import _ "github.com/seccomp/libseccomp-golang"
