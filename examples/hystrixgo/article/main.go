// Article is seed 003's program ("hystrix-go usage and internals") as the
// article wrote it for github.com/afex/hystrix-go, with one change to the
// library: it imports rxhystrix's drop-in,
// github.com/rxhystrix/rxhystrix/hystrixgo, instead. The program around the
// calls adds only what makes the run repeatable: a gate that holds the
// admitted calls until the others are turned away, so that they overlap
// as the article's concurrent requests did, and counters of the answers.
// It keeps even the article's Timeout of int(3 * time.Second), which
// hystrix-go and the drop-in read as milliseconds.
//
// The article's service calls https://www.baidu.com/; so that it runs
// anywhere, the downstream is a flag, and by default a server of the
// program's own on 127.0.0.1 that answers at once.
//
//	go run ./examples/hystrixgo/article
//	go run ./examples/hystrixgo/article -downstream https://www.baidu.com/
//
// It makes fifteen concurrent calls of the command "wuqq", which admits
// ten at once: the others are answered by the fallback, as in the
// article's first picture.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
	"github.com/rxhystrix/rxhystrix/hystrixgo" // was github.com/afex/hystrix-go/hystrix
)

func main() {
	downstream := flag.String("downstream", "", "the URL the service calls (default: a server of its own)")
	cmdline.Parse()
	url, stop, err := serve(*downstream)
	if err != nil {
		fmt.Fprintln(os.Stderr, "article:", err)
		os.Exit(1)
	}
	defer stop()
	ok, fallbacks := run(url, 15)
	fmt.Printf("%d calls succeeded, %d were answered by the fallback\n", ok, fallbacks)
}

// run is the article's code: the command's configuration, then calls
// concurrent calls of it. It returns how many succeeded and how many the
// fallback answered.
func run(url string, calls int) (ok, fallbacks int) {
	hystrix.ConfigureCommand("wuqq", hystrix.CommandConfig{
		Timeout:                int(3 * time.Second),
		MaxConcurrentRequests:  10,
		SleepWindow:            5000,
		RequestVolumeThreshold: 10,
		ErrorPercentThreshold:  30,
	})
	var mu sync.Mutex
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = hystrix.Do("wuqq", func() error {
				// talk to other services
				<-release // the calls overlap, as the article's concurrent requests did
				_, err := http.Get(url)
				if err != nil {
					fmt.Printf("get error:%v\n", err)
					return err
				}
				mu.Lock()
				ok++
				mu.Unlock()
				return nil
			}, func(err error) error {
				fmt.Printf("handle  error:%v\n", err)
				mu.Lock()
				fallbacks++
				mu.Unlock()
				return nil
			})
		}()
	}
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return fallbacks >= calls-10 })
	close(release)
	wg.Wait()
	return ok, fallbacks
}

// waitFor waits, up to five seconds, until done reports true: the calls
// beyond the ten admitted are turned away while those ten still run.
func waitFor(done func() bool) {
	for deadline := time.Now().Add(5 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// serve returns url, or the URL of a server of the program's own.
func serve(url string) (string, func(), error) {
	if url != "" {
		return url, func() {}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", func() { srv.Close() }, nil
}
