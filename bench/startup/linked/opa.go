//go:build opa

package main

import _ "github.com/open-policy-agent/opa/v1/rego"
