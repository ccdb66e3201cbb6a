package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunComposesTheCommands(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out), out.String())
	assert.Equal(t, ""+
		"Zip2(GetUser, GetRecommendations):   Ada (user 7), recommended: bestseller-1, bestseller-2\n"+
		"FlatMap(GetUser -> GetOrders):       o-1 35.50, o-2 120.00, o-3 250.00\n"+
		"rxgo Filter(total > 100).Map(ID):    o-2, o-3\n"+
		"Merge(GetPrice x3):                  3 prices, total 11.50\n"+
		"Queue(GetPrice) futures:             apple 1.20, bread 2.50, cheese 7.80\n"+
		"executions seen on the metrics' Completions streams:\n"+
		"  GetOrders            2 x [EMITx3, SUCCESS]\n"+
		"  GetPrice             6 x [SUCCESS]\n"+
		"  GetRecommendations   1 x [FAILURE, FALLBACK_SUCCESS]\n"+
		"  GetUser              2 x [SUCCESS]\n",
		out.String())
}
