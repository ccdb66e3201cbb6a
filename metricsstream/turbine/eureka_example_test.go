package turbine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// Eureka lists an application's instances; those UP are the cluster's,
// each asked on its management port when it registered one.
func ExampleEureka() {
	eureka := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"application": {"name": "ORDERS", "instance": [
			{"hostName": "orders-1.local", "status": "UP", "port": {"$": 8080, "@enabled": "true"},
			 "metadata": {"management.port": "8081"}},
			{"hostName": "orders-2.local", "status": "UP", "port": {"$": 8080, "@enabled": "true"}},
			{"hostName": "orders-3.local", "status": "OUT_OF_SERVICE", "port": {"$": 8080, "@enabled": "true"}}]}}`)
	}))
	defer eureka.Close()

	d, err := turbine.Eureka(turbine.EurekaConfig{
		Server: eureka.URL + "/eureka/",
		App:    "ORDERS",
		Path:   "/actuator/hystrix.stream",
		Client: eureka.Client(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	urls, err := d.Instances(context.Background())
	fmt.Println(err)
	for _, u := range urls {
		fmt.Println(u)
	}
	// Output:
	// <nil>
	// http://orders-1.local:8081/actuator/hystrix.stream
	// http://orders-2.local:8080/actuator/hystrix.stream
}
