package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/ssetest"
)

// testCA is an authority that signs the certificates of a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test authority"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns the PEM certificate and key of name, for 127.0.0.1, as a
// server and as a client.
func (ca *testCA) issue(t *testing.T, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return ca.issueFor(t, name, key)
}

// issueFor is issue for a key of the caller's.
func (ca *testCA) issueFor(t *testing.T, name string, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte) {
	t.Helper()
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// pool is the authority as the only root.
func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// writeFile writes data to name in dir, and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// rewriter returns a function that writes data to file as it is at s
// seconds past a minute ago, so that each rewrite has a modification time
// of its own, however fast the test writes.
func rewriter(t *testing.T, file string) func(data []byte, s int) {
	epoch := time.Now().Add(-time.Minute)
	return func(data []byte, s int) {
		t.Helper()
		at := epoch.Add(time.Duration(s) * time.Second)
		require.NoError(t, os.WriteFile(file, data, 0o600))
		require.NoError(t, os.Chtimes(file, at, at))
	}
}

// tlsInstance is an instance's stream over TLS with the authority's
// certificate, which asks its readers for one of the authority's.
func tlsInstance(t *testing.T, ca *testCA) (stream string, instance *ssetest.Stream) {
	t.Helper()
	instance = ssetest.NewStream()
	t.Cleanup(instance.Close)
	srv := httptest.NewUnstartedServer(instance)
	certPEM, keyPEM := ca.issue(t, "instance")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.pool()}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL + "/hystrix.stream", instance
}

// clientOf returns a client that trusts only ca.
func clientOf(ca *testCA) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: ca.pool()}
	t.DisableKeepAlives = true // each request its own handshake
	return &http.Client{Transport: t}
}

// waitFor gets u with client until its body contains want, and returns
// the body.
func waitFor(t *testing.T, client *http.Client, u, want string) string {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		res, err := client.Get(u)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		if strings.Contains(string(b), want) {
			return string(b)
		}
		require.False(t, time.Now().After(deadline), "%s never said %q: %s", u, want, b)
		runtime.Gosched()
	}
}

// The turbine serves HTTPS, over HTTP/2, and reads an instance that
// asks for a client certificate, trusting the authority of -ca.
func TestRunServesHTTPSAndPresentsAClientCertificate(t *testing.T) {
	ca, dir := newTestCA(t), t.TempDir()
	servedCert, servedKey := ca.issue(t, "turbine")
	clientCert, clientKey := ca.issue(t, "turbine client")
	stream, instance := tlsInstance(t, ca)
	base := started(t, "-cluster", "api="+stream,
		"-tls-cert", writeFile(t, dir, "tls.crt", servedCert), "-tls-key", writeFile(t, dir, "tls.key", servedKey),
		"-ca", writeFile(t, dir, "ca.crt", ca.pem),
		"-client-cert", writeFile(t, dir, "client.crt", clientCert), "-client-key", writeFile(t, dir, "client.key", clientKey))
	require.True(t, strings.HasPrefix(base, "https://"), base)

	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	go func() {
		for ctx.Err() == nil && instance.Send(ctx, ssetest.Data(`{"type":"HystrixCommand","name":"GetUser","reportingHosts":1}`)) == nil {
		}
	}()
	client := clientOf(ca)
	waitFor(t, client, base+"/metrics", `rxhystrix_turbine_instance_connected{cluster="api",instance="`+stream+`"} 1`)

	res, err := client.Get(base + "/")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 2, res.ProtoMajor, "HTTP/2, so that a page's streams share a connection")
	assert.Equal(t, "turbine", res.TLS.PeerCertificates[0].Subject.CommonName)
}

// Without -ca the instance's certificate is not trusted; without
// -client-cert the instance refuses the turbine. The page says why.
func TestRunSaysWhyAnInstanceOverTLSIsNotRead(t *testing.T) {
	ca, dir := newTestCA(t), t.TempDir()
	clientCert, clientKey := ca.issue(t, "turbine client")
	stream, _ := tlsInstance(t, ca)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no -ca", []string{"-client-cert", writeFile(t, dir, "client.crt", clientCert), "-client-key", writeFile(t, dir, "client.key", clientKey)},
			"certificate signed by unknown authority"},
		{"no -client-cert", []string{"-ca", writeFile(t, dir, "ca.crt", ca.pem)}, "certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := started(t, append([]string{"-cluster", "api=" + stream}, tc.args...)...)
			waitFor(t, http.DefaultClient, base+"/", tc.want)
		})
	}
}

// A certificate rotated on disk is served from the next handshake, a
// renewal that rewrites the certificate alone too; one that does not
// load leaves the one before in use, and is reported once for each
// change of the files.
func TestRunServesTheCertificateOnDisk(t *testing.T) {
	ca, dir := newTestCA(t), t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	// write writes a file and dates it: files written in one tick of the
	// file system's clock would look unchanged.
	write := func(path string, data []byte, at time.Time) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, data, 0o600))
		require.NoError(t, os.Chtimes(path, at, at))
	}
	served := func(base string) string {
		t.Helper()
		res, err := clientOf(ca).Get(base + "/")
		require.NoError(t, err)
		res.Body.Close()
		return res.TLS.PeerCertificates[0].Subject.CommonName
	}
	const report = "the certificate read before stays in use"
	epoch := time.Now().Add(-time.Minute)
	at := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }

	cert, key := ca.issue(t, "first")
	write(certFile, cert, at(0))
	write(keyFile, key, at(0))
	base, out := startedWithOutput(t, "-cluster", "api=https://127.0.0.1:1/hystrix.stream", "-tls-cert", certFile, "-tls-key", keyFile)
	assert.Equal(t, "first", served(base))

	secondKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	cert, key = ca.issueFor(t, "second", secondKey)
	write(certFile, cert, at(1))
	write(keyFile, key, at(1))
	assert.Equal(t, "second", served(base))
	cert, _ = ca.issueFor(t, "renewed", secondKey)
	write(certFile, cert, at(2))
	assert.Equal(t, "renewed", served(base), "a certificate renewed for the same key")

	write(certFile, []byte("half written"), at(3))
	assert.Equal(t, "renewed", served(base), "the certificate before stays in use")
	assert.Equal(t, "renewed", served(base))
	assert.Equal(t, 1, strings.Count(out(), report), "reported once: %s", out())
	assert.Contains(t, out(), certFile+", "+keyFile+": tls: failed to find any PEM data in certificate input; "+report)
	write(certFile, []byte("still half written"), at(4))
	assert.Equal(t, "renewed", served(base))
	assert.Equal(t, 2, strings.Count(out(), report), "reported again once the files changed: %s", out())

	cert, key = ca.issue(t, "third")
	write(certFile, cert, at(5))
	write(keyFile, key, at(5))
	assert.Equal(t, "third", served(base))
	assert.Equal(t, 2, strings.Count(out(), report), "a certificate that loads is not reported: %s", out())
}

// With -client-ca the turbine serves only readers with a certificate of
// that authority.
func TestRunRequiresClientCertificatesOfClientCA(t *testing.T) {
	ca, readers, dir := newTestCA(t), newTestCA(t), t.TempDir()
	servedCert, servedKey := ca.issue(t, "turbine")
	base := started(t, "-cluster", "api=http://127.0.0.1:1/hystrix.stream",
		"-tls-cert", writeFile(t, dir, "tls.crt", servedCert), "-tls-key", writeFile(t, dir, "tls.key", servedKey),
		"-client-ca", writeFile(t, dir, "readers.crt", readers.pem))

	_, err := clientOf(ca).Get(base + "/")
	require.Error(t, err, "a reader without a certificate")
	notPEM := writeFile(t, dir, "not.crt", []byte("not a certificate"))
	err = run(context.Background(), []string{"-cluster", "api=http://127.0.0.1:1/s",
		"-tls-cert", filepath.Join(dir, "tls.crt"), "-tls-key", filepath.Join(dir, "tls.key"), "-client-ca", notPEM}, io.Discard, io.Discard)
	assert.EqualError(t, err, "-client-ca: "+notPEM+": no PEM certificate in it")

	for _, tc := range []struct {
		issuer *testCA
		ok     bool
	}{{readers, true}, {ca, false}} {
		certPEM, keyPEM := tc.issuer.issue(t, "reader")
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		client := clientOf(ca)
		client.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{cert}
		res, err := client.Get(base + "/")
		if !tc.ok {
			require.Error(t, err, "a reader with a certificate of another authority")
			continue
		}
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode)
	}
}

// The authorities of -client-ca rotated on disk are those of the next
// handshake; a file that no longer reads leaves those before in use, and
// is reported once.
func TestRunReadsTheClientCAOnDisk(t *testing.T) {
	ca, first, second, dir := newTestCA(t), newTestCA(t), newTestCA(t), t.TempDir()
	servedCert, servedKey := ca.issue(t, "turbine")
	clientCA := filepath.Join(dir, "readers.crt")
	write := rewriter(t, clientCA)
	write(first.pem, 0)
	base, out := startedWithOutput(t, "-cluster", "api=http://127.0.0.1:1/hystrix.stream",
		"-tls-cert", writeFile(t, dir, "tls.crt", servedCert), "-tls-key", writeFile(t, dir, "tls.key", servedKey),
		"-client-ca", clientCA)
	// served gets the page as a reader with a certificate of issuer, and
	// reports whether it was served, over HTTP/2.
	served := func(issuer *testCA) bool {
		t.Helper()
		certPEM, keyPEM := issuer.issue(t, "reader")
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		client := clientOf(ca)
		client.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{cert}
		res, err := client.Get(base + "/")
		if err != nil {
			return false
		}
		res.Body.Close()
		assert.Equal(t, 2, res.ProtoMajor, "HTTP/2 with a client certificate too")
		return res.StatusCode == http.StatusOK
	}
	const report = "the authorities read before stay in use"

	assert.True(t, served(first))
	assert.False(t, served(second))
	write(second.pem, 1)
	assert.False(t, served(first), "the authority rotated out")
	assert.True(t, served(second), "the authority rotated in")
	write(append(append([]byte{}, first.pem...), second.pem...), 2)
	assert.True(t, served(first), "a bundle of both")
	assert.True(t, served(second))

	write([]byte("half written"), 3)
	assert.True(t, served(first), "the authorities before stay in use")
	assert.True(t, served(second))
	assert.Equal(t, 1, strings.Count(out(), report), "reported once: %s", out())
	assert.Contains(t, out(), "turbine: "+clientCA+": no PEM certificate in it; "+report)

	require.NoError(t, os.Remove(clientCA))
	assert.True(t, served(first), "a file gone leaves the authorities before in use")
	assert.True(t, served(second))
	assert.Equal(t, 2, strings.Count(out(), report), "reported once more: %s", out())
	assert.Contains(t, out(), "turbine: stat "+clientCA+": no such file or directory; "+report)
}

func TestRunRefusesBadTLSFlags(t *testing.T) {
	dir := t.TempDir()
	notPEM := writeFile(t, dir, "ca.crt", []byte("not a certificate"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-tls-cert", "tls.crt"}, "-tls-cert without -tls-key"},
		{[]string{"-tls-key", "tls.key"}, "-tls-key without -tls-cert"},
		{[]string{"-client-key", "c.key"}, "-client-key without -client-cert"},
		{[]string{"-tls-cert", filepath.Join(dir, "none.crt"), "-tls-key", filepath.Join(dir, "none.key")},
			"-tls-cert, -tls-key: stat " + filepath.Join(dir, "none.crt")},
		{[]string{"-tls-cert", notPEM, "-tls-key", notPEM}, "tls: failed to find any PEM data in certificate input"},
		{[]string{"-ca", filepath.Join(dir, "none.crt")}, "-ca: stat " + filepath.Join(dir, "none.crt")},
		{[]string{"-ca", notPEM}, "-ca: " + notPEM + ": no PEM certificate in it"},
		{[]string{"-client-ca", notPEM}, "-client-ca without -tls-cert"},
	} {
		err := run(context.Background(), append([]string{"-cluster", "api=http://10.0.0.7/s"}, tc.args...), io.Discard, io.Discard)
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
}

// A watched file that is gone before any read failed is reported, once,
// and the value read before stays.
func TestWatchedFileGoneIsReportedOnce(t *testing.T) {
	file := writeFile(t, t.TempDir(), "value", []byte("first"))
	var out strings.Builder
	w, err := newWatched([]string{file}, func() (string, error) {
		b, err := os.ReadFile(file)
		return string(b), err
	}, "the value read before stays in use", &out)
	require.NoError(t, err)
	require.NoError(t, os.Remove(file))
	assert.Equal(t, "first", w.get())
	assert.Equal(t, "first", w.get())
	assert.Equal(t, "turbine: stat "+file+": no such file or directory; the value read before stays in use\n", out.String())
}

// The roots of -ca rotated on disk are trusted from the next connection,
// and the idle connections made with the roots before are closed; roots
// that do not read leave those before in use, reported once.
func TestClientReadsTheCAOnDisk(t *testing.T) {
	first, second, dir := newTestCA(t), newTestCA(t), t.TempDir()
	// serverOf serves with a certificate of ca, and tells closed when a
	// connection it served closes.
	serverOf := func(ca *testCA) (u string, closed chan struct{}) {
		certPEM, keyPEM := ca.issue(t, "instance")
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		closed = make(chan struct{}, 16)
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				closed <- struct{}{}
			}
		}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL, closed
	}
	ofFirst, firstClosed := serverOf(first)
	ofSecond, _ := serverOf(second)
	caFile := filepath.Join(dir, "ca.crt")
	write := rewriter(t, caFile)
	write(first.pem, 0)
	var out strings.Builder
	client, err := (&tlsFlags{ca: caFile}).client(&out)
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	trusted := func(u string) bool {
		t.Helper()
		res, err := client.Get(u)
		if err != nil {
			require.ErrorContains(t, err, "certificate signed by unknown authority")
			return false
		}
		res.Body.Close()
		return true
	}
	const report = "the authorities read before stay in use"

	assert.True(t, trusted(ofFirst))
	assert.False(t, trusted(ofSecond))
	write(second.pem, 1)
	assert.True(t, trusted(ofSecond), "the authority rotated in")
	select {
	case <-firstClosed:
	case <-time.After(failAfter):
		t.Fatal("the idle connection made with the roots before was not closed")
	}
	assert.False(t, trusted(ofFirst), "the authority rotated out")

	write([]byte("half written"), 2)
	assert.True(t, trusted(ofSecond), "the authorities before stay in use")
	assert.False(t, trusted(ofFirst))
	assert.Equal(t, 1, strings.Count(out.String(), report), "reported once: %s", out.String())
	assert.Contains(t, out.String(), "turbine: "+caFile+": no PEM certificate in it; "+report)
}
