package runtime

import (
	goruntime "runtime"
	"runtime/debug"
)

// BuildInfo describes this build of claw, whose version is version: the
// version, Go version, OS, architecture and VCS revision.
func BuildInfo(version string) map[string]string {
	info := map[string]string{"version": version, "go": goruntime.Version(), "os": goruntime.GOOS, "arch": goruntime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info["revision"] = s.Value
			}
		}
	}
	return info
}
