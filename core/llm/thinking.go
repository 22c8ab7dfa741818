package llm

import "fmt"

// ThinkingLevel is how hard a reasoning model should think.
type ThinkingLevel string

const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh"
)

// ThinkingLevels lists every level, weakest first.
var ThinkingLevels = []ThinkingLevel{ThinkingOff, ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh}

// ParseThinkingLevel validates a level name.
func ParseThinkingLevel(s string) (ThinkingLevel, error) {
	for _, l := range ThinkingLevels {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("%w %q (want off, minimal, low, medium, high or xhigh)", ErrInvalidThinkingLevel, s)
}

// SupportedLevels lists the levels a model accepts: only "off" for a model
// without reasoning; "xhigh" only where the model's ThinkingLevelMap names
// it; never a level the map sets to null.
func SupportedLevels(m *Model) []ThinkingLevel {
	if m == nil || !m.Reasoning {
		return []ThinkingLevel{ThinkingOff}
	}
	var out []ThinkingLevel
	for _, l := range ThinkingLevels {
		v, present := m.ThinkingLevelMap[l]
		if present && v == nil {
			continue
		}
		if l == ThinkingXHigh && !present {
			continue
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		// A models.json can null every level of a reasoning model; the
		// model is then driven as one without adjustable thinking rather
		// than left with no level at all.
		return []ThinkingLevel{ThinkingOff}
	}
	return out
}

// ClampThinking returns the level nearest to want that m supports,
// preferring a stronger one.
func ClampThinking(m *Model, want ThinkingLevel) ThinkingLevel {
	avail := SupportedLevels(m)
	if len(avail) == 0 {
		return ThinkingOff
	}
	idx := -1
	for i, l := range ThinkingLevels {
		if l == want {
			idx = i
		}
	}
	has := func(l ThinkingLevel) bool {
		for _, a := range avail {
			if a == l {
				return true
			}
		}
		return false
	}
	if idx < 0 {
		return avail[0]
	}
	for i := idx; i < len(ThinkingLevels); i++ {
		if has(ThinkingLevels[i]) {
			return ThinkingLevels[i]
		}
	}
	for i := idx - 1; i >= 0; i-- {
		if has(ThinkingLevels[i]) {
			return ThinkingLevels[i]
		}
	}
	return avail[0]
}
