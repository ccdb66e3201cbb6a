package httpcommand

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// FaultsHandler returns a handler that reads and sets the faults r's
// commands inject (command.Config.Faults), live: a game day run from a
// terminal, as Chaos Monkey for Spring Boot's actuator endpoint sets its
// assaults. The command is named by the query parameter "command":
//
//	GET    /faults                  the faults of every command that injects them or did
//	GET    /faults?command=GetUser  GetUser's
//	PUT    /faults?command=GetUser  sets GetUser's faults to the request's JSON body
//	DELETE /faults?command=GetUser  turns GetUser's faults off
//
// The JSON of a command's faults holds its FaultConfig, the delay as a
// Go duration, the error as its message ("" for
// command.ErrInjectedFault) and whether it is a command.BadRequest, the
// error's code when codes (each a [FaultErrors]) made it, and
// the end of the faults in RFC 3339 ("" for none), and the faults
// injected since its key was first used:
//
//	{"command":"GetUser","enabled":true,"delayPercentage":10,"delay":"2s","errorPercentage":5,"error":"","badRequest":false,"markedOnly":false,"until":"2026-12-06T12:30:00Z","active":true,"delays":7,"errors":3}
//
// active says whether the faults are injected now: enabled, and until
// not past. PUT reads the same fields, ignoring the command, active and
// the counts, so that
// what GET answers can be sent back changed; a field left out is zero.
// Instead of until, PUT may give "for", a Go duration: the faults end that
// long after the request, on the registry's clock ({"enabled":true,
// "errorPercentage":50,"for":"10m"} runs a ten-minute game day). It
// replaces the faults of the Config in force and keeps the rest. A
// command the registry does not know is 404, so that a typo injects
// nothing; a body that is not such JSON, or faults that
// command.Config.Validate refuses, are 400 with the error. GET and PUT
// answer with the command's faults.
//
// A PUT that gives a code has its error made by the first of codes that
// knows the code, with the message of "error": with [FaultStatuses],
// {"enabled":true,"errorPercentage":50,"code":"503"} answers half the
// requests 503, as the server would; a service that calls, or serves,
// gRPC passes grpccommand.FaultStatuses too, and
// {"enabled":true,"errorPercentage":50,"code":"Unavailable","error":"draining"}
// injects the status a draining server answers, which the key counts,
// and the caller gets, as the server's. A code that none of codes knows
// is 400, naming it.
//
// Whoever reaches the handler can fail the service's calls: serve it on
// an administrative listener only. It panics if r or one of codes is nil.
func FaultsHandler(r *command.Registry, codes ...FaultErrors) http.Handler {
	mustNotNil("FaultsHandler", r == nil || slices.Contains(codes, nil))
	return &faultsHandler{r: r, codes: codes}
}

type faultsHandler struct {
	r     *command.Registry
	codes []FaultErrors
}

// faultsJSON is the JSON of a command's faults.
type faultsJSON struct {
	Command         string  `json:"command"`
	Enabled         bool    `json:"enabled"`
	DelayPercentage float64 `json:"delayPercentage"`
	Delay           string  `json:"delay"`
	ErrorPercentage float64 `json:"errorPercentage"`
	Error           string  `json:"error"`
	// Code is the code of the error, made by a FaultErrors, or "".
	Code string `json:"code,omitempty"`
	// BadRequest makes the injected error a command.BadRequest: no
	// fallback, no count against the breaker.
	BadRequest bool `json:"badRequest"`
	MarkedOnly bool `json:"markedOnly"`
	// Until is when the faults end by themselves, in RFC 3339, or "".
	Until string `json:"until"`
	// For, read by PUT only, sets Until that long after now.
	For string `json:"for,omitempty"`
	// Active, written by GET only, is true while the faults are
	// injected: enabled, and until not past.
	Active bool  `json:"active"`
	Delays int64 `json:"delays"`
	Errors int64 `json:"errors"`
}

func (h *faultsHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	key := req.URL.Query().Get("command")
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		if key == "" {
			writeJSON(w, h.all())
			return
		}
	case http.MethodPut, http.MethodDelete:
		if key == "" {
			http.Error(w, "httpcommand: FaultsHandler: "+req.Method+" needs ?command=", http.StatusBadRequest)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
		http.Error(w, "httpcommand: FaultsHandler: method "+req.Method+" not allowed", http.StatusMethodNotAllowed)
		return
	}
	if _, ok := h.r.Config(key); !ok {
		http.Error(w, fmt.Sprintf("httpcommand: FaultsHandler: no command %q", key), http.StatusNotFound)
		return
	}
	switch req.Method {
	case http.MethodPut:
		f, err := h.readFaults(req, h.r.Clock().Now())
		if err == nil {
			err = h.r.ConfigureFunc(key, func(cfg *command.Config) { cfg.Faults = f })
		}
		if err != nil {
			http.Error(w, "httpcommand: FaultsHandler: "+err.Error(), http.StatusBadRequest)
			return
		}
	case http.MethodDelete:
		err := h.r.ConfigureFunc(key, func(cfg *command.Config) { cfg.Faults.Enabled = false })
		if err != nil { // the rest of the Config is in force, hence valid
			http.Error(w, "httpcommand: FaultsHandler: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, h.faultsOf(key))
}

// readFaults reads a FaultConfig from req's JSON body, at now.
func (h *faultsHandler) readFaults(req *http.Request, now time.Time) (command.FaultConfig, error) {
	var j faultsJSON
	dec := json.NewDecoder(http.MaxBytesReader(nil, req.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return command.FaultConfig{}, fmt.Errorf("the body is not the JSON of faults: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return command.FaultConfig{}, errors.New("the body is not the JSON of faults: more follows the faults' object")
	}
	f := command.FaultConfig{
		Enabled:         j.Enabled,
		DelayPercentage: j.DelayPercentage,
		ErrorPercentage: j.ErrorPercentage,
		MarkedOnly:      j.MarkedOnly,
	}
	if j.Delay != "" {
		d, err := time.ParseDuration(j.Delay)
		if err != nil {
			return command.FaultConfig{}, fmt.Errorf("delay: %w", err)
		}
		f.Delay = d
	}
	switch {
	case j.Code != "":
		err, bad := faultError(h.codes, j.Code, j.Error)
		if bad != nil {
			return command.FaultConfig{}, bad
		}
		f.Error = err
	case j.Error != "":
		f.Error = errors.New(j.Error)
	}
	if j.BadRequest {
		if f.Error == nil {
			f.Error = command.ErrInjectedFault
		}
		f.Error = command.BadRequest(f.Error)
	}
	switch {
	case j.For != "" && j.Until != "":
		return command.FaultConfig{}, errors.New("for and until: give one")
	case j.For != "":
		d, err := time.ParseDuration(j.For)
		if err != nil || d <= 0 {
			return command.FaultConfig{}, fmt.Errorf("for: %q is not a positive duration", j.For)
		}
		f.Until = now.Add(d)
	case j.Until != "":
		t, err := time.Parse(time.RFC3339Nano, j.Until)
		if err != nil {
			return command.FaultConfig{}, fmt.Errorf("until: %w", err)
		}
		f.Until = t
	}
	return f, nil
}

// faultsOf returns key's faults and those injected.
func (h *faultsHandler) faultsOf(key string) faultsJSON {
	cfg, _ := h.r.Config(key)
	f := cfg.Faults
	j := faultsJSON{
		Command: key, Enabled: f.Enabled, DelayPercentage: f.DelayPercentage, Delay: f.Delay.String(),
		ErrorPercentage: f.ErrorPercentage, MarkedOnly: f.MarkedOnly,
	}
	if !f.Until.IsZero() {
		j.Until = f.Until.UTC().Format(time.RFC3339Nano)
	}
	if f.Error != nil {
		j.BadRequest = command.IsBadRequest(f.Error)
		err := f.Error
		if inner := errors.Unwrap(err); j.BadRequest && inner != nil {
			err = inner
		}
		var ok bool
		if j.Code, j.Error, ok = faultCode(h.codes, err); !ok {
			j.Error = err.Error()
		}
		if err == command.ErrInjectedFault {
			j.Error = ""
		}
	}
	if m, ok := h.r.Metrics().LookupCommand(key); ok {
		st, _ := m.Status()
		j.Active, j.Delays, j.Errors = st.Faults.Enabled, st.Faults.Delays, st.Faults.Errors
	}
	return j
}

// all returns the faults of every command that injects them or did,
// sorted by key.
func (h *faultsHandler) all() []faultsJSON {
	out := []faultsJSON{}
	for m := range h.r.Metrics().Commands() {
		if st, _ := m.Status(); st.Faults.Shown() {
			out = append(out, h.faultsOf(m.Key()))
		}
	}
	slices.SortFunc(out, func(a, b faultsJSON) int { return strings.Compare(a.Command, b.Command) })
	return out
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_ = json.NewEncoder(w).Encode(v)
}
