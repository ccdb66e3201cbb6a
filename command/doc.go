// Package command wraps calls to downstream dependencies in Hystrix commands.
package command
