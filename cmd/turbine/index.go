package main

import (
	"html/template"
	"net/http"
	"net/url"

	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// indexPage lists the clusters: each linked to its dashboard and its
// stream, with its instances and how its discovery goes.
var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta http-equiv="refresh" content="5"><title>Turbine</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left}.down{color:#c00}</style>
</head>
<body>
<h1>Turbine</h1>
{{range .}}
<h2 id="{{.Name}}">{{.Name}}</h2>
<p><a href="{{.Dashboard}}">dashboard</a> · <a href="{{.Stream}}">stream</a> · {{.What}}{{with .Discovery}} · {{if .MaxWait}}looked up as it changes{{else}}looked up every {{.Interval}}{{end}}
{{- if .Err}}, <span class="down">the last lookup failed: {{.Err}}</span>{{end}}{{end}}</p>
<table>
<tr><th>instance</th><th>read</th><th>objects</th><th>last error</th></tr>
{{range .Instances}}<tr><td>{{.RedactedURL}}</td>{{if .Connected}}<td>yes</td>{{else}}<td class="down">no</td>{{end}}<td>{{.Objects}}</td><td>{{with .Err}}{{.}}{{end}}</td></tr>
{{else}}<tr><td colspan="4">no instance</td></tr>
{{end}}</table>
{{end}}
</body>
</html>
`))

// clusterView is what indexPage shows of a cluster.
type clusterView struct {
	Name, What        string
	Dashboard, Stream string
	Instances         []turbine.Instance
	Discovery         *turbine.DiscoveryStatus
}

// indexHandler serves indexPage over the clusters, in the order of their
// flags.
func indexHandler(clusters clusterFlag, aggregators map[string]*turbine.Aggregator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		views := make([]clusterView, 0, len(clusters))
		for _, c := range clusters {
			a := aggregators[c.name]
			stream := c.stream()
			v := clusterView{
				Name:      c.name,
				What:      c.shown(),
				Stream:    stream,
				Dashboard: "/hystrix/?" + url.Values{"stream": {stream}, "title": {c.name}}.Encode(),
				Instances: a.Instances(),
			}
			if s, ok := a.Discovery(); ok {
				v.Discovery = &s
			}
			views = append(views, v)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		indexPage.Execute(w, views)
	})
}
