package host

// This file works out how full the context is (get_session_stats, the
// extensions' getContextUsage) and when the branch was last compacted.

import (
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// contextUsage estimates how full m's context window is with msgs (the
// messages of path): the last reply's usage plus an estimate of what came
// after it. Right after a compaction the size is unknown (null) until a
// reply reports it.
func contextUsage(m *llm.Model, path []session.Entry, msgs []llm.Message) *api.ContextUsage {
	if m == nil || m.ContextWindow <= 0 {
		return nil
	}
	usage := &api.ContextUsage{ContextWindow: m.ContextWindow}
	if t, ok := latestCompaction(path); ok {
		fresh := false
		for i := len(msgs) - 1; i >= 0; i-- {
			if a, ok := msgs[i].(*llm.AssistantMessage); ok && a.StopReason != llm.StopError && a.StopReason != llm.StopAborted {
				fresh = a.Timestamp > t && compaction.ContextTokens(a.Usage) > 0
				break
			}
		}
		if !fresh {
			return usage
		}
	}
	tokens := compaction.EstimateContext(msgs).Tokens
	percent := float64(tokens) / float64(m.ContextWindow) * 100
	usage.Tokens, usage.Percent = &tokens, &percent
	return usage
}

// latestCompaction is the time of the newest compaction on the path.
func latestCompaction(path []session.Entry) (int64, bool) {
	for i := len(path) - 1; i >= 0; i-- {
		if c, ok := path[i].(*session.CompactionEntry); ok {
			t, err := time.Parse(time.RFC3339Nano, c.Timestamp)
			if err != nil {
				return 0, false
			}
			return t.UnixMilli(), true
		}
	}
	return 0, false
}
