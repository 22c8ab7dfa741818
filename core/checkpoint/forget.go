package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// JournalDir is where a session's edit journal lives in the agent
// directory.
func JournalDir(agentDir, sessionID string) string {
	return filepath.Join(agentDir, "checkpoints", sessionID)
}

// ForgetSession removes what a deleted session's checkpoints hold: their
// refs in the repository dir is in, and in those of the further roots
// more (each when it is in a git work tree; git's next gc drops the
// objects only they kept), and the session's journals.
func ForgetSession(ctx context.Context, agentDir, dir, sessionID string, more ...string) error {
	if sessionID == "" || filepath.Base(sessionID) != sessionID {
		return fmt.Errorf("checkpoint: %q is not a session id", sessionID)
	}
	var errs []error
	for _, d := range append([]string{dir}, more...) {
		if r, err := Open(ctx, d, Options{}); err == nil {
			errs = append(errs, r.Prune(ctx, sessionID+"/"))
		} else if !errors.Is(err, errNotRepo) {
			errs = append(errs, err)
		}
	}
	if agentDir != "" {
		if err := os.RemoveAll(JournalDir(agentDir, sessionID)); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint: %w", err))
		}
	}
	return errors.Join(errs...)
}
