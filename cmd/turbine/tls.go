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
	"sync"
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
	fs.StringVar(&f.clientCA, "client-ca", "", "PEM certificates of the authorities whose client certificates the HTTPS server requires of every reader; needs -tls-cert")
	fs.StringVar(&f.ca, "ca", "", "PEM certificates of the authorities to trust, beside the system's, when reading instances and registries over https")
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
	if f.clientCA != "" {
		if cfg.ClientCAs, err = readPool("-client-ca", f.clientCA, x509.NewCertPool()); err != nil {
			return nil, err
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// readPool adds the PEM certificates of the file that flag names to
// pool, and returns it; a file without one is an error.
func readPool(flag, file string, pool *x509.CertPool) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", flag, file)
	}
	return pool, nil
}

// client returns the client that reads the instances and asks the
// registries: http.DefaultTransport's settings, with -ca's roots and
// -client-cert's certificate. It has no Timeout, which would cut every
// stream.
func (f *tlsFlags) client(errs io.Writer) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.ca != "" {
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool() // a system without a pool of its own
		}
		if cfg.RootCAs, err = readPool("-ca", f.ca, roots); err != nil {
			return nil, err
		}
	}
	pair, err := loadKeyPair("-client-cert", f.clientCert, "-client-key", f.clientKey, errs)
	if err != nil {
		return nil, err
	}
	if pair != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return pair.get(), nil }
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	return &http.Client{Transport: t}, nil
}

// keyPair is a certificate and its key read from two files, and read
// again when either file's modification time changes, so that a
// certificate rotated on disk (by cert-manager, say) is used without a
// restart. The files are looked at on each handshake: a turbine makes
// few, its connections being long streams.
type keyPair struct {
	certFile, keyFile string
	errs              io.Writer

	mu              sync.Mutex
	cert            *tls.Certificate
	certMod, keyMod time.Time
	failed          [2]time.Time // the modification times of the last pair that did not load
}

// loadKeyPair reads the pair that the flags certFlag and keyFlag name,
// or returns nil when neither is set. One without the other, or a pair
// that does not load, is an error naming the flags.
func loadKeyPair(certFlag, certFile, keyFlag, keyFile string, errs io.Writer) (*keyPair, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, fmt.Errorf("%s without %s", keyFlag, certFlag)
	case keyFile == "":
		return nil, fmt.Errorf("%s without %s", certFlag, keyFlag)
	}
	p := &keyPair{certFile: certFile, keyFile: keyFile, errs: errs}
	certMod, keyMod, err := p.modTimes()
	if err == nil {
		err = p.load(certMod, keyMod)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s, %s %s: %w", certFlag, certFile, keyFlag, keyFile, err)
	}
	return p, nil
}

func (p *keyPair) modTimes() (cert, key time.Time, err error) {
	c, err := os.Stat(p.certFile)
	if err != nil {
		return cert, key, err
	}
	k, err := os.Stat(p.keyFile)
	if err != nil {
		return cert, key, err
	}
	return c.ModTime(), k.ModTime(), nil
}

func (p *keyPair) load(certMod, keyMod time.Time) error {
	cert, err := tls.LoadX509KeyPair(p.certFile, p.keyFile)
	if err != nil {
		return err
	}
	p.cert, p.certMod, p.keyMod = &cert, certMod, keyMod
	return nil
}

// get returns the pair, read again if a file changed since. A pair that
// no longer loads (a rotation half written, a file gone) leaves the one
// before in use, and is reported to errs once per change of the files.
func (p *keyPair) get() *tls.Certificate {
	p.mu.Lock()
	defer p.mu.Unlock()
	certMod, keyMod, err := p.modTimes()
	if err == nil && certMod.Equal(p.certMod) && keyMod.Equal(p.keyMod) {
		return p.cert
	}
	if err == nil {
		err = p.load(certMod, keyMod)
	}
	if err != nil && !(certMod.Equal(p.failed[0]) && keyMod.Equal(p.failed[1])) {
		p.failed = [2]time.Time{certMod, keyMod}
		fmt.Fprintf(p.errs, "turbine: %s, %s: %v; the certificate read before stays in use\n", p.certFile, p.keyFile, err)
	}
	return p.cert
}
