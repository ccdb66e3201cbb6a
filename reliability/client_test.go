package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// statusError is the error of an answer with a 5xx status.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("server answered %d", e.code) }

// jsonClient gets replies from servers over loopback, as a service calls
// its downstream dependencies.
type jsonClient struct {
	http *http.Client
}

// newJSONClient returns a client with a transport of its own, whose
// connections are closed when the test ends.
func newJSONClient(t testing.TB) *jsonClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &jsonClient{http: &http.Client{Transport: tr}}
}

// get fetches url and decodes its JSON reply. The request ends when ctx
// does.
func (c *jsonClient) get(ctx context.Context, url string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return reply{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return reply{}, &statusError{resp.StatusCode}
	}
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return reply{}, fmt.Errorf("decoding the reply of %s: %w", url, err)
	}
	return r, nil
}
