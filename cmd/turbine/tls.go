package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// tlsFlags are the flags of TLS: the certificate the turbine serves
// with, and the roots it trusts and the certificate it presents when it
// reads the instances' streams and asks the registries.
type tlsFlags struct {
	cert, key             string
	clientCA              string
	ca                    string
	clientCert, clientKey string
}

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain), read again when it changes; needs -tls-key")
	fs.StringVar(&f.key, "tls-key", "", "the PEM private key of -tls-cert")
	fs.StringVar(&f.clientCA, "client-ca", "", "PEM certificates of the authorities whose client certificates the HTTPS server requires of every reader, read again when it changes; needs -tls-cert")
	fs.StringVar(&f.ca, "ca", "", "PEM certificates of the authorities to trust, beside the system's, when reading instances and registries over https, read again when it changes")
	fs.StringVar(&f.clientCert, "client-cert", "", "the PEM certificate to present to instances and registries that ask for one, read again when it changes; needs -client-key")
	fs.StringVar(&f.clientKey, "client-key", "", "the PEM private key of -client-cert")
}

// serverConfig returns the TLS configuration to serve with, or nil
// without -tls-cert. Reload failures are written to errs.
func (f *tlsFlags) serverConfig(errs io.Writer) (*tls.Config, error) {
	pair, err := loadKeyPair("-tls-cert", f.cert, "-tls-key", f.key, errs)
	switch {
	case err != nil:
		return nil, err
	case pair == nil && f.clientCA != "":
		return nil, errors.New("-client-ca without -tls-cert")
	case pair == nil:
		return nil, nil
	}
	cfg := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return pair.get(), nil },
	}
	if f.clientCA == "" {
		return cfg, nil
	}
	// The authorities are watched as the certificate is: each handshake
	// gets the configuration of the authorities on disk.
	withCAs, err := newWatched([]string{f.clientCA}, func() (*tls.Config, error) {
		pool, err := readPool(f.clientCA, x509.NewCertPool())
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
		// http.Server offers HTTP/2 in the configuration it serves
		// with, which a handshake's own does not inherit.
		c.NextProtos = []string{"h2", "http/1.1"}
		return c, nil
	}, "the authorities read before stay in use", errs)
	if err != nil {
		return nil, fmt.Errorf("-client-ca: %w", err)
	}
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return withCAs.get(), nil },
	}, nil
}

// readPool adds the PEM certificates of file to pool, and returns it; a
// file without one is an error. Its errors name the file.
func readPool(file string, pool *x509.CertPool) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", file)
	}
	return pool, nil
}

// client returns the client that reads the instances and asks the
// registries: http.DefaultTransport's settings, with -ca's roots and
// -client-cert's certificate, each read again when its files change. It
// has no Timeout, which would cut every stream.
func (f *tlsFlags) client(errs io.Writer) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	pair, err := loadKeyPair("-client-cert", f.clientCert, "-client-key", f.clientKey, errs)
	if err != nil {
		return nil, err
	}
	if pair != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return pair.get(), nil }
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	if f.ca == "" {
		return &http.Client{Transport: t}, nil
	}
	// A transport's roots are fixed once it dials, so each set of roots
	// read gets a transport of its own, cloned from t.
	transports, err := newWatched([]string{f.ca}, func() (*http.Transport, error) {
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool() // a system without a pool of its own
		}
		if roots, err = readPool(f.ca, roots); err != nil {
			return nil, err
		}
		withRoots := t.Clone()
		withRoots.TLSClientConfig.RootCAs = roots
		return withRoots, nil
	}, "the authorities read before stay in use", errs)
	if err != nil {
		return nil, fmt.Errorf("-ca: %w", err)
	}
	return &http.Client{Transport: &rootsTransport{transports: transports}}, nil
}

// rootsTransport sends each request with the transport of the roots on
// disk: a connection made before the roots changed goes on (a stream
// read keeps its connection), and a new one trusts the roots read last.
type rootsTransport struct {
	transports *watched[*http.Transport]
	last       atomic.Pointer[http.Transport]
}

// RoundTrip sends req with the transport of the roots on disk, and closes
// the idle connections of the one before it, if it changed.
func (r *rootsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t := r.transports.get()
	if old := r.last.Swap(t); old != nil && old != t {
		old.CloseIdleConnections()
	}
	return t.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the transport in
// use, for http.Client's CloseIdleConnections.
func (r *rootsTransport) CloseIdleConnections() {
	if t := r.last.Load(); t != nil {
		t.CloseIdleConnections()
	}
}

// watched is a value read from files, and read again when a file's
// modification time changes, so that a certificate or an authority
// rotated on disk (by cert-manager, say) is used without a restart. The
// files are looked at each time the value is asked for, on each
// handshake: a turbine makes few, its connections being long streams.
type watched[T any] struct {
	files []string
	read  func() (T, error) // its errors name the files, as os's do
	kept  string            // what a read that fails says of the value kept
	errs  io.Writer

	mu     sync.Mutex
	value  T
	mods   []time.Time // of the files the value was read from
	failed []time.Time // of the files of the last read that failed
	why    string      // why it failed
}

// newWatched reads the value from files with read, whose errors name
// the files. kept ends the report of a later read that fails ("the
// certificate read before stays in use"), written to errs.
func newWatched[T any](files []string, read func() (T, error), kept string, errs io.Writer) (*watched[T], error) {
	w := &watched[T]{files: files, read: read, kept: kept, errs: errs}
	mods, err := w.modTimes()
	if err == nil {
		err = w.load(mods)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (w *watched[T]) modTimes() ([]time.Time, error) {
	mods := make([]time.Time, len(w.files))
	for i, f := range w.files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		mods[i] = st.ModTime()
	}
	return mods, nil
}

func (w *watched[T]) load(mods []time.Time) error {
	v, err := w.read()
	if err != nil {
		return err
	}
	w.value, w.mods = v, mods
	return nil
}

// get returns the value, read again if a file changed since. A value
// that no longer reads (a rotation half written, a file gone) leaves the
// one before in use, and is reported to errs once per change of the
// files.
func (w *watched[T]) get() T {
	w.mu.Lock()
	defer w.mu.Unlock()
	mods, err := w.modTimes()
	if err == nil && slices.EqualFunc(mods, w.mods, time.Time.Equal) {
		return w.value
	}
	if err == nil {
		err = w.load(mods)
	}
	if err != nil && (err.Error() != w.why || !slices.EqualFunc(mods, w.failed, time.Time.Equal)) {
		w.failed, w.why = mods, err.Error()
		fmt.Fprintf(w.errs, "turbine: %v; %s\n", err, w.kept)
	}
	return w.value
}

// loadKeyPair reads the pair that the flags certFlag and keyFlag name,
// watched, or returns nil when neither is set. One without the other, or
// a pair that does not load, is an error naming the flags.
func loadKeyPair(certFlag, certFile, keyFlag, keyFile string, errs io.Writer) (*watched[*tls.Certificate], error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, fmt.Errorf("%s without %s", keyFlag, certFlag)
	case keyFile == "":
		return nil, fmt.Errorf("%s without %s", certFlag, keyFlag)
	}
	pair, err := newWatched([]string{certFile, keyFile}, func() (*tls.Certificate, error) {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certFile, keyFile, err)
		}
		return &cert, nil
	}, "the certificate read before stays in use", errs)
	if err != nil {
		return nil, fmt.Errorf("%s, %s: %w", certFlag, keyFlag, err)
	}
	return pair, nil
}
