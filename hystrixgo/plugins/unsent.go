package plugins

import "log"

// logUnsent logs, with the standard logger, a statistic that could not be
// handed to its client, as hystrix-go's collectors do: a collector runs
// after the command has answered, so there is no caller to return the
// error to.
func logUnsent(system, name string, err error) {
	if err != nil {
		log.Printf("plugins: sending %s statistic %s: %v", system, name, err)
	}
}
