// witnessclient drives a C2SP tlog-witness (https://c2sp.org/tlog-witness) the way a log does, with
// Go's golang.org/x/mod/sumdb/tlog for the trees and consistency proofs (tlog.ProveTree) and
// golang.org/x/mod/sumdb/note for signing checkpoints, and checks each cosignature it gets back with
// a note.Verifier written here from https://c2sp.org/tlog-cosignature (key ID type 0x04, the
// message "cosignature/v1\ntime <t>\n" and the checkpoint, a big-endian timestamp before the
// signature). It shares no code with the service's TypeScript.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run ./tests/go/witnessclient keygen -origin ORIGIN
//	    prints {"skey": ..., "vkey": ...}: a new log key named by the origin
//	... witnessclient run -url PREFIX -skey SKEY -witness VKEY
//	    submits a fixed series of checkpoints to a witness that has never seen the log, and prints
//	    one JSON object per request: {step, old, size, status, content_type, body, cosigned, timestamp}
//	... witnessclient open -file NOTE -log VKEY -witness VKEY [-witness VKEY ...]
//	    opens a signed checkpoint with note.Open, trusting the log's key and the witnesses' keys, and
//	    prints {"origin", "size", "root", "signers": [names whose signatures verified], "timestamps"}
//	    (a signature by an unknown key is ignored, a bad one by a known key fails, as note.Open does)
//	... witnessclient vectors -n N
//	    prints known answers for trees of the entries "entry 0" ... "entry N-1": roots, every
//	    consistency and inclusion proof, and a checkpoint signed by a new key with its vkey
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tree is a log held in memory: its entries and every stored hash, read by tlog's proofs.
type tree struct {
	entries [][]byte
	hashes  []tlog.Hash
}

func (t *tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, index := range indexes {
		if index < 0 || index >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("no stored hash %d", index)
		}
		out[i] = t.hashes[index]
	}
	return out, nil
}

func newTree(entries [][]byte) *tree {
	t := &tree{}
	for i, entry := range entries {
		hashes, err := tlog.StoredHashes(int64(i), entry, t)
		if err != nil {
			panic(err)
		}
		t.entries = append(t.entries, entry)
		t.hashes = append(t.hashes, hashes...)
	}
	return t
}

func (t *tree) root(n int64) tlog.Hash {
	h, err := tlog.TreeHash(n, t)
	if err != nil {
		panic(err)
	}
	return h
}

// proof is the consistency proof from old to n; empty from size 0, between equal sizes, and
// (for a request the witness must refuse) from a larger size.
func (t *tree) proof(old, n int64) tlog.TreeProof {
	if old == 0 || old >= n {
		return nil
	}
	p, err := tlog.ProveTree(n, old, t)
	if err != nil {
		panic(err)
	}
	return p
}

func entries(n int, change int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("entry %d", i))
		if i == change {
			out[i] = []byte("rewritten")
		}
	}
	return out
}

func checkpointText(origin string, n int64, root tlog.Hash) string {
	return fmt.Sprintf("%s\n%d\n%s\n", origin, n, base64.StdEncoding.EncodeToString(root[:]))
}

func sign(text string, signer note.Signer) []byte {
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		panic(err)
	}
	return msg
}

// cosigner verifies cosignature/v1 signatures (https://c2sp.org/tlog-cosignature) of one witness.
type cosigner struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

const cosignatureV1 = 0x04

func cosignerKeyHash(name string, key []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write([]byte{cosignatureV1})
	h.Write(key)
	return binary.BigEndian.Uint32(h.Sum(nil)[:4])
}

// newCosigner reads a vkey <name>+<hex key ID>+<base64(0x04 || 32-byte Ed25519 key)>.
func newCosigner(vkey string) (*cosigner, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return nil, errors.New("malformed witness vkey")
	}
	id, err := strconv.ParseUint(parts[1], 16, 32)
	if err != nil || len(parts[1]) != 8 {
		return nil, errors.New("malformed witness key ID")
	}
	material, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(material) != 1+ed25519.PublicKeySize || material[0] != cosignatureV1 {
		return nil, errors.New("the witness vkey is not an Ed25519 cosignature/v1 key")
	}
	key := ed25519.PublicKey(material[1:])
	if cosignerKeyHash(parts[0], key) != uint32(id) {
		return nil, errors.New("the witness vkey's key ID does not match its key")
	}
	return &cosigner{name: parts[0], hash: uint32(id), key: key}, nil
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return c.hash }

// Verify gets the signature after its key ID: the u64 timestamp, then the Ed25519 signature of
// "cosignature/v1\ntime <timestamp>\n" followed by the note text.
func (c *cosigner) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	timestamp := binary.BigEndian.Uint64(sig[:8])
	if timestamp > math.MaxInt64 {
		return false
	}
	signed := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", timestamp)), msg...)
	return ed25519.Verify(c.key, signed, sig[8:])
}

type result struct {
	Step        string `json:"step"`
	Old         int64  `json:"old"`
	Size        int64  `json:"size"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Cosigned    bool   `json:"cosigned"`
	Timestamp   int64  `json:"timestamp"`
}

var client = &http.Client{Timeout: 20 * time.Second}

func submit(url string, body []byte) (int, string, string) {
	res, err := client.Post(url+"/add-checkpoint", "text/plain", bytes.NewReader(body))
	if err != nil {
		fail(err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		fail(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(answer)
}

func requestBody(old int64, proof []tlog.Hash, signed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "witnessclient:", err)
	os.Exit(1)
}

func run(args []string) {
	flags := flag.NewFlagSet("run", flag.ExitOnError)
	url := flags.String("url", "", "the witness's submission prefix")
	skey := flags.String("skey", "", "the log's note signer key (its name is the origin)")
	witnessVkey := flags.String("witness", "", "the witness's cosignature/v1 vkey")
	flags.Parse(args)
	signer, err := note.NewSigner(*skey)
	if err != nil {
		fail(err)
	}
	witness, err := newCosigner(*witnessVkey)
	if err != nil {
		fail(err)
	}
	origin := signer.Name()
	// Another key under the same name, and a key for an origin the witness does not know.
	impostorSkey, _, _ := note.GenerateKey(rand.Reader, origin)
	impostor, _ := note.NewSigner(impostorSkey)
	strangerSkey, _, _ := note.GenerateKey(rand.Reader, origin+"/unknown")
	stranger, _ := note.NewSigner(strangerSkey)

	log := newTree(entries(64, -1))
	fork := newTree(entries(64, 3))
	checkpoint := func(t *tree, n int64, s note.Signer) []byte {
		return sign(checkpointText(s.Name(), n, t.root(n)), s)
	}
	out := json.NewEncoder(os.Stdout)
	step := func(name string, old, n int64, body []byte, signed []byte) {
		status, contentType, answer := submit(*url, body)
		r := result{Step: name, Old: old, Size: n, Status: status, ContentType: contentType, Body: answer}
		if status == http.StatusOK {
			// The answer joined to the checkpoint is a note the witness's key must have signed.
			opened, err := note.Open(append(append([]byte{}, signed...), answer...), note.VerifierList(witness))
			if err == nil && len(opened.Sigs) == 1 {
				raw, _ := base64.StdEncoding.DecodeString(opened.Sigs[0].Base64)
				r.Cosigned = true
				r.Timestamp = int64(binary.BigEndian.Uint64(raw[4:12]))
			}
		}
		out.Encode(r)
	}
	submitTree := func(name string, t *tree, old, n int64, s note.Signer) {
		signed := checkpoint(t, n, s)
		step(name, old, n, requestBody(old, t.proof(old, n), signed), signed)
	}

	submitTree("unknown origin", log, 0, 10, stranger)
	submitTree("signed by another key", log, 0, 10, impostor)
	signed := checkpoint(log, 10, signer)
	step("proof from size 0", 0, 10, requestBody(0, []tlog.Hash{log.root(5)}, signed), signed)
	submitTree("first checkpoint", log, 0, 10, signer)
	submitTree("old size above size", log, 20, 10, signer)
	submitTree("stale old size", log, 0, 20, signer)
	signed = checkpoint(log, 20, signer)
	bad := log.proof(10, 20)
	bad[0][0] ^= 1
	step("bad proof", 10, 20, requestBody(10, bad, signed), signed)
	signed = checkpoint(fork, 20, signer)
	step("fork", 10, 20, requestBody(10, fork.proof(10, 20), signed), signed)
	signed = checkpoint(log, 20, signer)
	step("64 proof lines", 10, 20, requestBody(10, make([]tlog.Hash, 64), signed), signed)
	step("malformed old line", 10, 20, append([]byte("old 010\n"), requestBody(10, log.proof(10, 20), signed)[len("old 10\n"):]...), signed)
	submitTree("consistent checkpoint", log, 10, 20, signer)
	submitTree("same size, other root", fork, 20, 20, signer)
	submitTree("same checkpoint again", log, 20, 20, signer)
	submitTree("rollback", log, 10, 15, signer)
	submitTree("larger checkpoint", log, 20, 37, signer)
}

func keygen(args []string) {
	flags := flag.NewFlagSet("keygen", flag.ExitOnError)
	origin := flags.String("origin", "", "the log's origin")
	flags.Parse(args)
	skey, vkey, err := note.GenerateKey(rand.Reader, *origin)
	if err != nil {
		fail(err)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]string{"skey": skey, "vkey": vkey})
}

type vectors struct {
	Entries     []string          `json:"entries"`
	Roots       []string          `json:"roots"`
	Consistency []proofVector     `json:"consistency"`
	Inclusion   []proofVector     `json:"inclusion"`
	Note        map[string]string `json:"note"`
}

type proofVector struct {
	Old   int64    `json:"old,omitempty"`
	Index int64    `json:"index,omitempty"`
	Size  int64    `json:"size"`
	Proof []string `json:"proof"`
}

func encode(hashes []tlog.Hash) []string {
	out := []string{}
	for _, h := range hashes {
		out = append(out, base64.StdEncoding.EncodeToString(h[:]))
	}
	return out
}

func vectorsCommand(args []string) {
	flags := flag.NewFlagSet("vectors", flag.ExitOnError)
	n := flags.Int64("n", 20, "the largest tree size")
	flags.Parse(args)
	t := newTree(entries(int(*n), -1))
	v := vectors{Entries: []string{}, Roots: []string{}, Consistency: []proofVector{}, Inclusion: []proofVector{}}
	for _, e := range t.entries {
		v.Entries = append(v.Entries, string(e))
	}
	for size := int64(0); size <= *n; size++ {
		root := t.root(size)
		v.Roots = append(v.Roots, base64.StdEncoding.EncodeToString(root[:]))
		for old := int64(1); old < size; old++ {
			v.Consistency = append(v.Consistency, proofVector{Old: old, Size: size, Proof: encode(t.proof(old, size))})
		}
		for index := int64(0); index < size; index++ {
			p, err := tlog.ProveRecord(size, index, t)
			if err != nil {
				fail(err)
			}
			v.Inclusion = append(v.Inclusion, proofVector{Index: index, Size: size, Proof: encode(p)})
		}
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, "example.com/go-log")
	if err != nil {
		fail(err)
	}
	signer, _ := note.NewSigner(skey)
	v.Note = map[string]string{"vkey": vkey, "signed": string(sign(checkpointText("example.com/go-log", *n, t.root(*n)), signer))}
	json.NewEncoder(os.Stdout).Encode(v)
}

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func openCommand(args []string) {
	flags := flag.NewFlagSet("open", flag.ExitOnError)
	file := flags.String("file", "", "the signed checkpoint")
	logVkey := flags.String("log", "", "the log's note verifier key")
	var witnesses repeated
	flags.Var(&witnesses, "witness", "a witness's cosignature/v1 verifier key")
	flags.Parse(args)
	text, err := os.ReadFile(*file)
	if err != nil {
		fail(err)
	}
	logVerifier, err := note.NewVerifier(*logVkey)
	if err != nil {
		fail(err)
	}
	verifiers := []note.Verifier{logVerifier}
	for _, vkey := range witnesses {
		c, err := newCosigner(vkey)
		if err != nil {
			fail(err)
		}
		verifiers = append(verifiers, c)
	}
	n, err := note.Open(text, note.VerifierList(verifiers...))
	if err != nil {
		fail(err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		fail(errors.New("not a checkpoint"))
	}
	out := map[string]any{"origin": lines[0], "size": lines[1], "root": lines[2], "signers": []string{}, "timestamps": map[string]uint64{}}
	for _, sig := range n.Sigs {
		out["signers"] = append(out["signers"].([]string), sig.Name)
		raw, _ := base64.StdEncoding.DecodeString(sig.Base64)
		if sig.Name != logVerifier.Name() && len(raw) == 4+8+ed25519.SignatureSize {
			out["timestamps"].(map[string]uint64)[sig.Name] = binary.BigEndian.Uint64(raw[4:12])
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: witnessclient keygen|run|open|vectors [flags]"))
	}
	switch os.Args[1] {
	case "keygen":
		keygen(os.Args[2:])
	case "run":
		run(os.Args[2:])
	case "vectors":
		vectorsCommand(os.Args[2:])
	case "open":
		openCommand(os.Args[2:])
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}
