//go:build sigstore

package main

import _ "github.com/sigstore/sigstore/pkg/signature"
