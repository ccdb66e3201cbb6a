package reading

import "time"

// UnixSeconds is t in seconds since the Unix epoch, as a timestamp gauge
// reports it, and 0 for the zero time: not yet.
func UnixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
