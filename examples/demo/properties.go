package main

import (
	"fmt"
	"log"
	"os"

	"github.com/rxhystrix/rxhystrix/hystrixprops"
)

// readProperties puts the Hystrix properties of file in force in props,
// and logs those that have no effect.
func readProperties(props *hystrixprops.Source, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := hystrixprops.Parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, why := range p.Ignored() {
		log.Printf("demo: %s: no effect: %s", file, why)
	}
	return props.Set(p)
}
