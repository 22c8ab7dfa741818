package tools

import (
	"bytes"
	"os"
	"strconv"
)

// groupRunning reports whether a process of group pgid is running, not
// merely a zombie waiting to be reaped: where nothing reaps orphans (a
// container whose first process does not), a killed background job stays
// a zombie in its group for good.
func groupRunning(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc to look in: the kernel said the group exists
	}
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and
		// parentheses, so the fields are counted from its last ')'.
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		f := bytes.Fields(stat[end+1:])
		if len(f) < 3 || string(f[0]) == "Z" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			return true
		}
	}
	return false
}
