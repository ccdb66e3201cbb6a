// Package hystrixprops configures rxhystrix's commands and pools with
// Hystrix's properties, as a Hystrix service is configured with Archaius
// or a Spring application.properties:
//
//	hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds=2000
//	hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25
//	hystrix.threadpool.Users.coreSize=20
//
// so that a service moving from Hystrix keeps its configuration file.
//
//	props, err := hystrixprops.Parse(file)
//	getUser := command.New("GetUser", run, command.WithConfig(props.Command("GetUser", command.Config{
//		Timeout: 500 * time.Millisecond, // the command's own, as Hystrix's Setter
//	})))
//
// # Resolution
//
// Each field is resolved as Hystrix resolves a property, highest first:
// the key's own property (hystrix.command.<key>.<name>), the value the
// code gave (a field that is not its zero value), the default property
// (hystrix.command.default.<name>), and Hystrix's default, which is what
// a zero field means in package command. [Properties.Command],
// [Properties.Pool] and [Properties.Collapser] do it for a command key, a
// pool key and a collapser key; the pool of a command is named by its
// Config.Pool, which threadPoolKeyOverride sets.
//
// # Live changes
//
// Hystrix reads its dynamic properties on every use, and Archaius polls
// its configuration file. Here a [Source] holds the properties in force
// and the code's Config of each key configured through it; [Source.Set]
// puts new properties in force for all of them at once, and
// [Source.PollFile] polls a file (a mounted ConfigMap, say) and sets its
// properties whenever it changes, as [Source.PollURL] polls a URL (a
// configuration server's, as Archaius's additionalUrls), with
// conditional GETs:
//
//	props := hystrixprops.NewSource(command.DefaultRegistry, nil)
//	getUser := command.New("GetUser", run, command.WithConfig(props.Command("GetUser", command.Config{})))
//	go props.PollFile(ctx, "/etc/hystrix/hystrix.properties", time.Minute, func(err error) { log.Print(err) })
//
// A key is configured again with command.Registry.ConfigureFunc, and
// only in the fields that Hystrix's properties set, so that what an
// operator set meanwhile (injected faults, a rate limit) stays. A
// property removed falls back to the code's value, then to the default
// property, as in Hystrix. As in Hystrix, the metrics windows
// (metrics.rollingStats.*, metrics.rollingPercentile.*,
// metrics.healthSnapshot.intervalInMilliseconds) and maxQueueSize are read
// once, when the key or the pool is made, and a collapser's properties
// when it is made.
//
// # Bad input
//
// Hystrix ignores a property it does not know, and logs a value it cannot
// read and uses the default. [Parse] refuses both, naming the property, so
// that a typo does not leave a dependency unprotected. Properties that do
// not start with "hystrix." are not Hystrix's and are left alone, since
// they share the file with the rest of the program's. A value rxhystrix
// cannot mean is refused too: a requestVolumeThreshold or a coreSize of
// 0, an errorThresholdPercentage of 0 (a breaker that trips on
// successes), a timeout of 0 (execution.timeout.enabled=false turns the
// timeout off).
//
// Some of Hystrix's properties mean nothing in Go, or are rxhystrix's
// behaviour already. [Properties.Ignored] names those a file set, and
// why:
//
//   - execution.isolation.thread.interruptOnTimeout and
//     interruptOnFutureCancel: a run's context always ends at its timeout
//     and when its caller leaves;
//   - metrics.rollingPercentile.bucketSize: a latency distribution keeps
//     every value of its window;
//   - hystrix.threadpool keepAliveTimeMinutes: workers are goroutines,
//     started for each task;
//   - hystrix.threadpool metrics.rollingStats.*: a pool's metrics have
//     Hystrix's default windows;
//   - hystrix.collapser metrics.*: a collapser's metrics windows are its
//     batch command's;
//   - Hystrix's others, hystrix.timer.threadpool.default.coreSize, the
//     streams' hystrix.stream.*.intervalInMilliseconds and
//     hystrix.config.stream.maxConcurrentConnections, and the plugins'
//     hystrix.plugin.*.implementation: timeouts run on the registry's
//     timer lists, the streams take metricsstream's options, and plugins
//     are Go values. Their values are still checked, and any other
//     hystrix. property that is not a command's, a pool's or a
//     collapser's is refused.
//
// A pool's maximumSize, with allowMaximumSizeToDivergeFromCoreSize, is
// its CoreSize when larger: Hystrix's pool then runs up to maximumSize
// tasks at once without a queue, and rxhystrix's workers are started on
// demand anyway. With a queue (maxQueueSize above 0), Hystrix's pool grows
// past coreSize only once the queue is full, which queueSizeRejectionThreshold
// prevents unless it is larger than maxQueueSize: maximumSize counts only
// then.
package hystrixprops
