package llm

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Providers turn a failed request into an error message; when the server
// said how long to wait (Retry-After, retry-after-ms), they append a note
// in a fixed form so the runtime's retry can honour it without the HTTP
// response: "(retry-after: 12s)".

// RetryAfterNote is the note for h's retry headers, "" when there are
// none or they ask for no wait.
func RetryAfterNote(h http.Header, now time.Time) string {
	if h == nil {
		return ""
	}
	if ms := strings.TrimSpace(h.Get("retry-after-ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return fmt.Sprintf(" (retry-after: %gs)", v/1000)
		}
	}
	ra := strings.TrimSpace(h.Get("Retry-After"))
	if ra == "" {
		return ""
	}
	if v, err := strconv.ParseFloat(ra, 64); err == nil && v > 0 {
		return fmt.Sprintf(" (retry-after: %gs)", v)
	}
	if t, err := http.ParseTime(ra); err == nil && t.After(now) {
		return fmt.Sprintf(" (retry-after: %gs)", t.Sub(now).Seconds())
	}
	return ""
}

var retryAfterNote = regexp.MustCompile(`\(retry-after: (\d+(?:\.\d+)?)s\)`)

// RetryAfter reads the note RetryAfterNote put in an error message.
func RetryAfter(errorMessage string) (time.Duration, bool) {
	m := retryAfterNote.FindStringSubmatch(errorMessage)
	if m == nil {
		return 0, false
	}
	secs, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}
