package main

import "github.com/clawsec/claw/internal/runtime"

// Names in this package for what the runtime package now holds; each goes
// when the code that calls it has moved into the runtime too.
var providerSpecs = runtime.ProviderSpecs
