package compaction

import (
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// cutPoint says where a compaction cuts a path.
type cutPoint struct {
	// firstKept is the index of the first entry that stays.
	firstKept int
	// turnStart is the index of the entry that opened the turn the cut
	// falls into, or -1 when the cut starts a turn.
	turnStart int
	// splitTurn is true when the cut falls inside a turn whose start is
	// dropped: the entries from turnStart to firstKept are summarised on
	// their own.
	splitTurn bool
}

// isCutPoint reports whether the conversation may resume at e. A tool
// result never may: it must stay behind the assistant message that called
// the tool, and cutting at that assistant message keeps both. Settings
// changes, labels and extension state are not messages and are handled by
// [findCutPoint] itself.
func isCutPoint(e session.Entry) bool {
	switch e := e.(type) {
	case *session.MessageEntry:
		switch e.Role() {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleBashExecution, llm.RoleCustom,
			llm.RoleBranchSummary, llm.RoleCompactionSummary:
			return true
		}
	case *session.CustomMessageEntry, *session.BranchSummaryEntry:
		return true // they reach the model as user messages
	}
	return false
}

// startsTurn reports whether e opens a turn: something the user (or an
// extension speaking for them) put into the conversation.
func startsTurn(e session.Entry) bool {
	switch e := e.(type) {
	case *session.MessageEntry:
		r := e.Role()
		return r == llm.RoleUser || r == llm.RoleBashExecution
	case *session.CustomMessageEntry, *session.BranchSummaryEntry:
		return true
	}
	return false
}

// findTurnStart walks back from i (inclusive) to start for the entry that
// opened i's turn; -1 when there is none.
func findTurnStart(path []session.Entry, i, start int) int {
	for ; i >= start; i-- {
		if startsTurn(path[i]) {
			return i
		}
	}
	return -1
}

// findCutPoint chooses where to cut path[start:end] so that roughly
// keepTokens of the newest messages stay, as pi's findCutPoint does:
// walking back from the newest message entry, it adds up their estimated
// tokens until the budget is reached, then cuts at the first valid cut
// point at or after that message. If the budget is never reached,
// everything stays (the cut is at the first cut point). The cut then
// moves back over any settings changes or other non-message entries right
// before it, so they stay with the messages they preceded.
//
// Whether the cut splits a turn is judged from the message the budget
// picked. (pi judges it from the entry after moving back, so a model
// change just before a user message made it summarise the previous,
// complete turn as a "split" one.)
func findCutPoint(path []session.Entry, start, end, keepTokens int) cutPoint {
	// The first cut point at or after i, or -1.
	nextCut := func(i int) int {
		for ; i < end; i++ {
			if isCutPoint(path[i]) {
				return i
			}
		}
		return -1
	}
	picked := nextCut(start)
	if picked < 0 {
		return cutPoint{firstKept: start, turnStart: -1}
	}

	tokens := 0
	for i := end - 1; i >= start; i-- {
		me, ok := path[i].(*session.MessageEntry)
		if !ok {
			continue
		}
		tokens += EstimateTokens(me.Message())
		if tokens >= keepTokens {
			if c := nextCut(i); c >= 0 {
				picked = c
			}
			break
		}
	}

	cut := picked
	for cut > start {
		switch e := path[cut-1].(type) {
		case *session.CompactionEntry:
		case *session.MessageEntry:
			if e.Role() == llm.RoleSystem {
				// The system message declared what the kept
				// messages were sent with: it stays with them.
				cut--
				continue
			}
		default:
			cut--
			continue
		}
		break
	}

	cp := cutPoint{firstKept: cut, turnStart: -1}
	if me, ok := path[picked].(*session.MessageEntry); ok && me.Role() == llm.RoleUser {
		return cp
	}
	if ts := findTurnStart(path, picked, start); ts >= 0 && ts < cut {
		cp.turnStart = ts
		cp.splitTurn = true
	}
	return cp
}
