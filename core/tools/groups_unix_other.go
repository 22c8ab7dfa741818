//go:build unix && !linux

package tools

// groupRunning trusts the kernel's word that the group exists: without
// Linux's /proc, zombies cannot be told from running processes.
func groupRunning(int) bool { return true }
