package metricsstream

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/queryparam"
)

// maxDelayMillis bounds ?delay=: one hour.
const maxDelayMillis = 3_600_000

// streamInterval returns the interval a request asks for with ?delay=<ms>,
// or def when it does not ask. Only the first delay parameter counts, as
// a servlet's getParameter; an empty one is no request. Other parameters
// are ignored, even malformed ones (the dashboard passes its own on). The
// error names the parameter and says what is wanted.
func streamInterval(rawQuery string, def time.Duration) (time.Duration, error) {
	value, _, err := queryparam.First(rawQuery, "delay")
	if err != nil || value == "" {
		return def, err
	}
	ms, err := strconv.ParseInt(value, 10, 64)
	if err != nil || ms < 1 || ms > maxDelayMillis {
		return 0, fmt.Errorf("query parameter delay=%q: want a whole number of milliseconds from 1 to %d", value, maxDelayMillis)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
