// Package memory measures what one command (circuit) key costs to keep: the
// heap it holds and the goroutines it keeps alive, for hystrix-go,
// cep21/circuit v4 and, with -tags rxhystrix, rxhystrix.
//
// BenchmarkMemoryPerKey creates b.N keys, each with default settings, and
// runs one passing call through each, so the numbers are those of a key in
// use. Run it with a fixed count of keys:
//
//	go test -run='^$' -bench=MemoryPerKey -benchmem -benchtime=10000x ./memory/
//
// Per key it reports, besides the time and allocations of creating the key
// and making its first call:
//
//	bytes/key                  memory in use (runtime.MemStats HeapAlloc plus
//	                           StackInuse, after two GCs) while every key is
//	                           reachable; the key names are made before the
//	                           first reading and do not count
//	retained-bytes/key         the same after every reference to the keys is
//	                           dropped and the calls' timers (1 s timeouts)
//	                           have fired: what the implementation never frees
//	goroutines/key             goroutines alive while the keys are
//	leaked-goroutines/key      goroutines still alive after every reference to
//	                           the keys is dropped (and hystrix.Flush is called):
//	                           hystrix-go leaks two per name, which it never stops
//
// The rows:
//
//	hystrix-go      hystrix.Do on a new name with default settings
//	cep21-default   Manager.MustCreateCircuit with no configuration, then Execute
//	cep21-hystrix   the same with cep21's rolling stats and Hystrix closers, the
//	                closest cep21 comes to Hystrix's defaults
//	rxhystrix       command.New with default settings (pool isolation), then Execute
//	rxhystrix-hystrixgo
//	                the hystrix-go row with only the import changed (package
//	                hystrixgo); Flush keeps the names' command keys in
//	                command.DefaultRegistry, as hystrix-go keeps their settings
//
// The measurements read process-wide counters, so the rows run one after
// another and nothing else may run in the process meanwhile.
package memory
