// witness is a C2SP tlog-witness (https://c2sp.org/tlog-witness) written with Go's
// golang.org/x/mod/sumdb/note (checkpoint signatures) and golang.org/x/mod/sumdb/tlog (consistency
// proofs, tlog.CheckTree), and a cosignature/v1 signer written here from
// https://c2sp.org/tlog-cosignature. It shares no code with the service's TypeScript, so a log that
// gets its cosignatures verified by both this witness and the service's own was checked against
// code written apart from it. It keeps its state in memory and makes a new key on every start.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run ./tests/go/witness --name NAME --policy-log-vkey VKEY [--policy-log-vkey VKEY]... --listen HOST:PORT
//
// It prints "vkey <its cosignature/v1 vkey>" and "listening http://HOST:PORT" on stdout, then one
// line per request on stderr. SIGINT and SIGTERM stop it.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const cosignatureV1 = 0x04

type vkeys []string

func (v *vkeys) String() string     { return strings.Join(*v, ",") }
func (v *vkeys) Set(s string) error { *v = append(*v, s); return nil }

type state struct {
	size int64
	root tlog.Hash
}

type witness struct {
	name    string
	key     ed25519.PrivateKey
	keyHash uint32
	logs    map[string][]note.Verifier
	mu      sync.Mutex
	latest  map[string]state
}

func keyHash(name string, public ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write([]byte{cosignatureV1})
	h.Write(public)
	return binary.BigEndian.Uint32(h.Sum(nil)[:4])
}

// cosign makes the signature line: key ID, big-endian timestamp and the Ed25519 signature of
// "cosignature/v1\ntime <timestamp>\n" followed by the checkpoint text.
func (w *witness) cosign(text string) string {
	timestamp := time.Now().Unix()
	signature := ed25519.Sign(w.key, []byte(fmt.Sprintf("cosignature/v1\ntime %d\n%s", timestamp, text)))
	raw := make([]byte, 12, 12+len(signature))
	binary.BigEndian.PutUint32(raw[:4], w.keyHash)
	binary.BigEndian.PutUint64(raw[4:12], uint64(timestamp))
	raw = append(raw, signature...)
	return "— " + w.name + " " + base64.StdEncoding.EncodeToString(raw) + "\n"
}

var oldLine = regexp.MustCompile(`^old (0|[1-9][0-9]*)$`)

type answer struct {
	status      int
	contentType string
	body        string
}

func plain(status int, text string) answer {
	return answer{status, "text/plain; charset=utf-8", text + "\n"}
}

func (w *witness) addCheckpoint(body []byte) (answer, string) {
	blank := bytes.Index(body, []byte("\n\n"))
	if blank < 0 {
		return plain(400, "no blank line"), ""
	}
	head := strings.Split(string(body[:blank]), "\n")
	m := oldLine.FindStringSubmatch(head[0])
	if m == nil {
		return plain(400, "bad old line"), ""
	}
	old, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return plain(400, "bad old size"), ""
	}
	if len(head)-1 > 63 {
		return plain(400, "too many proof lines"), ""
	}
	var proof tlog.TreeProof
	for _, line := range head[1:] {
		h, err := tlog.ParseHash(line)
		if err != nil || base64.StdEncoding.EncodeToString(h[:]) != line {
			return plain(400, "bad proof line"), ""
		}
		proof = append(proof, h)
	}
	msg := body[blank+2:]
	split := bytes.LastIndex(msg, []byte("\n\n"))
	if split < 0 {
		return plain(400, "malformed note"), ""
	}
	lines := strings.Split(string(msg[:split]), "\n")
	if len(lines) < 3 {
		return plain(400, "malformed checkpoint"), ""
	}
	origin := lines[0]
	verifiers, known := w.logs[origin]
	if !known {
		return plain(404, "unknown origin"), origin
	}
	n, err := note.Open(msg, note.VerifierList(verifiers...))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		if errors.As(err, &unverified) || errors.As(err, &invalid) {
			return plain(403, "no trusted signature"), origin
		}
		return plain(400, err.Error()), origin
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return plain(400, "bad checkpoint size"), origin
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return plain(400, "bad checkpoint root"), origin
	}
	if old > size {
		return plain(400, "old size above size"), origin
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	latest, seen := w.latest[origin]
	if old != latest.size {
		return answer{409, "text/x.tlog.size", fmt.Sprintf("%d\n", latest.size)}, origin
	}
	switch {
	case old == 0 && len(proof) > 0:
		return plain(422, "proof from size 0"), origin
	case old == size:
		if len(proof) > 0 {
			return plain(422, "proof between equal sizes"), origin
		}
		if seen && latest.root != root {
			return plain(409, "same size, other root"), origin
		}
	case old > 0:
		if err := tlog.CheckTree(proof, size, root, old, latest.root); err != nil {
			return plain(422, "bad consistency proof"), origin
		}
	}
	w.latest[origin] = state{size, root}
	return answer{200, "text/plain; charset=utf-8", w.cosign(n.Text)}, origin
}

func (w *witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var a answer
	origin := ""
	switch {
	case r.URL.Path != "/add-checkpoint":
		a = plain(404, "not found")
	case r.Method != http.MethodPost:
		rw.Header().Set("Allow", "POST")
		a = plain(405, "POST only")
	default:
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, 64<<10))
		if err != nil {
			a = plain(413, "body too large")
		} else {
			a, origin = w.addCheckpoint(body)
		}
	}
	fmt.Fprintf(os.Stderr, "%s %d %q\n", time.Now().UTC().Format(time.RFC3339), a.status, origin)
	rw.Header().Set("Content-Type", a.contentType)
	rw.WriteHeader(a.status)
	io.WriteString(rw, a.body)
}

func main() {
	var logKeys vkeys
	name := flag.String("name", "", "the witness's key name")
	listen := flag.String("listen", "127.0.0.1:0", "HOST:PORT to serve POST /add-checkpoint on")
	flag.Var(&logKeys, "policy-log-vkey", "a trusted log's note vkey (its name is the origin); repeatable")
	flag.Parse()
	if *name == "" || len(logKeys) == 0 {
		fmt.Fprintln(os.Stderr, "usage: witness --name NAME --policy-log-vkey VKEY... --listen HOST:PORT")
		os.Exit(2)
	}
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	w := &witness{name: *name, key: private, keyHash: keyHash(*name, public), logs: map[string][]note.Verifier{}, latest: map[string]state{}}
	for _, vkey := range logKeys {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			fmt.Fprintf(os.Stderr, "--policy-log-vkey %s: %v\n", vkey, err)
			os.Exit(2)
		}
		w.logs[v.Name()] = append(w.logs[v.Name()], v)
	}
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	material := append([]byte{cosignatureV1}, public...)
	fmt.Printf("vkey %s+%08x+%s\n", *name, w.keyHash, base64.StdEncoding.EncodeToString(material))
	fmt.Printf("listening http://%s\n", listener.Addr())
	server := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		server.Close()
	}()
	if err := server.Serve(listener); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
