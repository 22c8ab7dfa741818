package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// What the release build stamps in (cmd/release, `make build`):
//
//	-ldflags "-X main.version=0.1.0 -X main.commit=<sha> -X main.date=<RFC 3339>"
//
// A binary built without them (go build, go install) reads what the Go
// toolchain recorded instead: the module version of `go install ...@v0.1.0`
// and the VCS revision and commit time of a build in a git checkout.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// buildInfo is what `gopi --version --json` prints; the text form is one
// line per field, "gopi <version>" first, as gopi always printed it.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// currentBuild is this binary's build information: the stamped values,
// else what the toolchain recorded, else "dev" and empty strings.
func currentBuild() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return buildFrom(buildInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}, bi)
}

// buildFrom fills what b (the stamps) lacks from bi, the toolchain's
// record (nil when there is none).
func buildFrom(b buildInfo, bi *debug.BuildInfo) buildInfo {
	if bi == nil {
		return b
	}
	stamped := b.Commit != ""
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install github.com/gopi-dev/gopi/cmd/gopi@v0.1.0
		b.Version = strings.TrimPrefix(bi.Main.Version, "v")
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && !stamped && b.Commit != "" {
		b.Commit += "-dirty"
	}
	return b
}

// printVersion writes `gopi --version`: the text form, or JSON for tools.
func printVersion(w io.Writer, asJSON bool) {
	b := currentBuild()
	if asJSON {
		out, _ := json.Marshal(b)
		fmt.Fprintln(w, string(out))
		return
	}
	fmt.Fprintln(w, "gopi", b.Version)
	if b.Commit != "" {
		fmt.Fprintln(w, "commit", b.Commit)
	}
	if b.Date != "" {
		fmt.Fprintln(w, "built", b.Date)
	}
	fmt.Fprintln(w, b.Go, b.Platform)
}
