package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfterHeader is how long h's retry headers (retry-after-ms, then
// Retry-After in seconds or as an HTTP date) ask the client to wait; 0
// when there are none or they ask for no wait. Providers put it on their
// ProviderError.
func RetryAfterHeader(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms := strings.TrimSpace(h.Get("retry-after-ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	ra := strings.TrimSpace(h.Get("Retry-After"))
	if ra == "" {
		return 0
	}
	if v, err := strconv.ParseFloat(ra, 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second))
	}
	if t, err := http.ParseTime(ra); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
