// A note.Verifier for a witness's cosignature/v1 key, written from https://c2sp.org/tlog-cosignature.

package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
