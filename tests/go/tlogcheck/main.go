// tlogcheck checks a C2SP tiled transparency log (https://c2sp.org/tlog-tiles, height 8) with Go's
// reference implementation of signed notes and tiled Merkle logs, golang.org/x/mod/sumdb/note and
// golang.org/x/mod/sumdb/tlog: the checkpoint's signature, every tile read against the checkpoint's
// root, an inclusion proof for every entry, optionally a consistency proof from an older checkpoint,
// and receipts (https://c2sp.org/tlog-proof). It prints a JSON summary, or an error and exits 1.
//
// GO111MODULE=off GOPATH=/usr/share/gocode go run ./tests/go/tlogcheck -log URL -vkey KEY [-old FILE] [-receipt FILE]...
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

var client = &http.Client{Timeout: 20 * time.Second}

func fetch(url string) ([]byte, error) {
	res, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", url, res.StatusCode)
	}
	return body, nil
}

type checkpoint struct {
	origin string
	tree   tlog.Tree
}

// openCheckpoint verifies the note with the verifier key and parses the C2SP checkpoint body:
// origin, size and base64 root hash, one per line (tlog.ParseTree reads the older go.sum form).
func openCheckpoint(msg []byte, verifiers note.Verifiers) (checkpoint, error) {
	n, err := note.Open(msg, verifiers)
	if err != nil {
		return checkpoint{}, fmt.Errorf("checkpoint signature: %v", err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		return checkpoint{}, fmt.Errorf("checkpoint has too few lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return checkpoint{}, fmt.Errorf("checkpoint size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return checkpoint{}, fmt.Errorf("checkpoint root %q", lines[2])
	}
	var hash tlog.Hash
	copy(hash[:], root)
	return checkpoint{origin: lines[0], tree: tlog.Tree{N: size, Hash: hash}}, nil
}

// tileReader reads hash tiles over HTTP at C2SP paths: Go's tile paths carry the height
// (tile/8/L/N), C2SP's do not (tile/L/N).
type tileReader struct{ prefix string }

func (r tileReader) Height() int { return height }

func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		path := strings.Replace(t.Path(), fmt.Sprintf("tile/%d/", height), "tile/", 1)
		data, err := fetch(r.prefix + "/" + path)
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// entries reads the entry bundles: big-endian uint16 length-prefixed entries.
func entries(prefix string, size int64) ([][]byte, error) {
	var all [][]byte
	for n := int64(0); n*256 < size; n++ {
		t := tlog.Tile{H: height, L: 0, N: n, W: 256}
		if rest := size - n*256; rest < 256 {
			t.W = int(rest)
		}
		path := strings.Replace(t.Path(), fmt.Sprintf("tile/%d/0/", height), "tile/entries/", 1)
		data, err := fetch(prefix + "/" + path)
		if err != nil {
			return nil, err
		}
		var bundle [][]byte
		for len(data) > 0 {
			if len(data) < 2 || len(data) < 2+int(binary.BigEndian.Uint16(data)) {
				return nil, fmt.Errorf("entry bundle %d is cut short", n)
			}
			l := int(binary.BigEndian.Uint16(data))
			bundle = append(bundle, data[2:2+l])
			data = data[2+l:]
		}
		if len(bundle) != t.W {
			return nil, fmt.Errorf("entry bundle %d holds %d entries, not %d", n, len(bundle), t.W)
		}
		all = append(all, bundle...)
	}
	return all, nil
}

// checkReceipt checks a tlog-proof: its checkpoint against the key, and its entry (the extra
// data) at its index by the inclusion proof.
func checkReceipt(text []byte, verifiers note.Verifiers) (map[string]interface{}, error) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	if line, _ := next(); line != "c2sp.org/tlog-proof@v1" {
		return nil, fmt.Errorf("receipt: first line %q", line)
	}
	line, _ := next()
	var entry []byte
	if strings.HasPrefix(line, "extra ") {
		var err error
		if entry, err = base64.StdEncoding.DecodeString(strings.TrimPrefix(line, "extra ")); err != nil {
			return nil, fmt.Errorf("receipt: extra: %v", err)
		}
		line, _ = next()
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(line, "index "), 10, 64)
	if !strings.HasPrefix(line, "index ") || err != nil {
		return nil, fmt.Errorf("receipt: index line %q", line)
	}
	var proof tlog.RecordProof
	for {
		line, ok := next()
		if !ok {
			return nil, fmt.Errorf("receipt: no checkpoint")
		}
		if line == "" {
			break
		}
		h, err := base64.StdEncoding.DecodeString(line)
		if err != nil || len(h) != tlog.HashSize {
			return nil, fmt.Errorf("receipt: proof hash %q", line)
		}
		var hash tlog.Hash
		copy(hash[:], h)
		proof = append(proof, hash)
	}
	at := bytes.Index(text, []byte("\n\n"))
	cp, err := openCheckpoint(text[at+2:], verifiers)
	if err != nil {
		return nil, fmt.Errorf("receipt: %v", err)
	}
	if err := tlog.CheckRecord(proof, cp.tree.N, cp.tree.Hash, index, tlog.RecordHash(entry)); err != nil {
		return nil, fmt.Errorf("receipt: entry %d: %v", index, err)
	}
	return map[string]interface{}{"index": index, "entry": string(entry), "size": cp.tree.N}, nil
}

type receipts []string

func (r *receipts) String() string     { return strings.Join(*r, ",") }
func (r *receipts) Set(v string) error { *r = append(*r, v); return nil }

func run() (map[string]interface{}, error) {
	prefix := flag.String("log", "", "the log's URL prefix, e.g. http://127.0.0.1:8080/log")
	vkey := flag.String("vkey", "", "the note verifier key")
	old := flag.String("old", "", "a file holding an older checkpoint the log must extend")
	var receiptFiles receipts
	flag.Var(&receiptFiles, "receipt", "a receipt file to check (repeatable)")
	flag.Parse()
	verifier, err := note.NewVerifier(*vkey)
	if err != nil {
		return nil, fmt.Errorf("verifier key: %v", err)
	}
	verifiers := note.VerifierList(verifier)
	msg, err := fetch(*prefix + "/checkpoint")
	if err != nil {
		return nil, err
	}
	cp, err := openCheckpoint(msg, verifiers)
	if err != nil {
		return nil, err
	}
	if cp.origin != verifier.Name() {
		return nil, fmt.Errorf("origin %q is not the key's name %q", cp.origin, verifier.Name())
	}
	hashes := tlog.TileHashReader(cp.tree, tileReader{*prefix})
	root, err := tlog.TreeHash(cp.tree.N, hashes)
	if err != nil {
		return nil, fmt.Errorf("tree hash from tiles: %v", err)
	}
	if root != cp.tree.Hash {
		return nil, fmt.Errorf("tiles hash to %v, not the checkpoint's %v", root, cp.tree.Hash)
	}
	all, err := entries(*prefix, cp.tree.N)
	if err != nil {
		return nil, err
	}
	encoded := make([]string, len(all))
	for i, e := range all {
		proof, err := tlog.ProveRecord(cp.tree.N, int64(i), hashes)
		if err != nil {
			return nil, fmt.Errorf("inclusion proof of entry %d: %v", i, err)
		}
		if err := tlog.CheckRecord(proof, cp.tree.N, cp.tree.Hash, int64(i), tlog.RecordHash(e)); err != nil {
			return nil, fmt.Errorf("entry %d: %v", i, err)
		}
		encoded[i] = string(e)
	}
	summary := map[string]interface{}{"origin": cp.origin, "size": cp.tree.N, "root": cp.tree.Hash.String(), "entries": encoded}
	if *old != "" {
		msg, err := os.ReadFile(*old)
		if err != nil {
			return nil, err
		}
		previous, err := openCheckpoint(msg, verifiers)
		if err != nil {
			return nil, fmt.Errorf("old %v", err)
		}
		if previous.tree.N > cp.tree.N {
			return nil, fmt.Errorf("old checkpoint %d is larger than %d", previous.tree.N, cp.tree.N)
		}
		proof, err := tlog.ProveTree(cp.tree.N, previous.tree.N, hashes)
		if err != nil {
			return nil, fmt.Errorf("consistency proof: %v", err)
		}
		if err := tlog.CheckTree(proof, cp.tree.N, cp.tree.Hash, previous.tree.N, previous.tree.Hash); err != nil {
			return nil, fmt.Errorf("checkpoint %d does not extend checkpoint %d: %v", cp.tree.N, previous.tree.N, err)
		}
		summary["extends"] = previous.tree.N
	}
	var checked []interface{}
	for _, file := range receiptFiles {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		result, err := checkReceipt(text, verifiers)
		if err != nil {
			return nil, err
		}
		checked = append(checked, result)
	}
	summary["receipts"] = checked
	return summary, nil
}

func main() {
	summary, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlogcheck:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(summary)
}
