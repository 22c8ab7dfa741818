module github.com/gopi-dev/gopi/core/codemode/enginebench

go 1.26.8

replace github.com/gopi-dev/gopi => ../../..

require (
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b
	github.com/gopi-dev/gopi v0.0.0-00010101000000-000000000000
)

require (
	github.com/dlclark/regexp2/v2 v2.5.2 // indirect
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/google/pprof v0.0.0-20230207041349-798e818bf904 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
