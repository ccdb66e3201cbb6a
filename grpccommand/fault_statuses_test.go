package grpccommand

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// A code is named as Go names it, as gRPC's specification does, or by
// its number; OK and what is none of them are refused.
func TestFaultStatusesNameCodes(t *testing.T) {
	for _, name := range []string{"Unavailable", "UNAVAILABLE", "14"} {
		err, bad := FaultStatuses.FaultError(name, "draining")
		require.NoError(t, bad, name)
		assert.Equal(t, codes.Unavailable, status.Code(err), name)
		code, message, ok := FaultStatuses.FaultCode(err)
		assert.True(t, ok)
		assert.Equal(t, "Unavailable", code, "as Go names it")
		assert.Equal(t, "draining", message)
	}
	for name, why := range map[string]string{"OK": "OK is not a fault", "0": "OK is not a fault", "Unavailabel": "not a gRPC status code", "17": "not a gRPC status code", "": "not a gRPC status code"} {
		_, bad := FaultStatuses.FaultError(name, "")
		assert.EqualError(t, bad, why, name)
	}
	_, _, ok := FaultStatuses.FaultCode(io.EOF)
	assert.False(t, ok, "not a status")
}

// A game day on a gRPC server: FaultsHandler with FaultStatuses injects
// the status an operator names into the guard's key, which the callers
// get and the key counts by its code, as the handler's own.
func TestFaultsHandlerInjectsGRPCStatuses(t *testing.T) {
	g := newGuardHarness(t, command.Config{})
	handler := answer("reply", nil)
	_, err := g.call(handler)
	require.NoError(t, err)
	faults := httpcommand.FaultsHandler(g.Registry.Registry, FaultStatuses)
	put := func(body string) string {
		rec := httptest.NewRecorder()
		faults.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/faults?command="+DefaultGuardKey, strings.NewReader(body)))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return rec.Body.String()
	}

	reply := put(`{"enabled":true,"errorPercentage":100,"code":"UNAVAILABLE","error":"draining"}`)
	assert.Contains(t, reply, `"error":"draining","code":"Unavailable"`)
	_, err = g.call(handler)
	assert.Equal(t, status.Error(codes.Unavailable, "draining").Error(), err.Error())
	assert.Equal(t, codes.Unavailable, status.Code(err))

	put(`{"enabled":true,"errorPercentage":100,"code":"NotFound","error":"no such user"}`)
	_, err = g.call(handler)
	assert.Equal(t, codes.NotFound, status.Code(err))
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, BAD_REQUEST: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 2]", g.Events(DefaultGuardKey))
}
