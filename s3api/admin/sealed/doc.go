// Package sealed reads and writes the encrypted bodies of MinIO's admin
// API: the password-sealed messages that madmin-go (and so mc) sends and
// expects for identity requests and responses, such as add-user,
// list-users, add-service-account and the policy attach/detach calls.
// The password is the caller's secret key.
//
// # Format
//
// A message is a 41-byte header followed by a DARE stream, the format of
// github.com/secure-io/sio-go with its default fragment size BufSize
// (16 KiB) and no associated data:
//
//	0                   32   33            41
//	┌───────────────────┬────┬─────────────┬───────────────────────────┐
//	│ salt              │ id │ nonce       │ DARE stream               │
//	│ 32 random bytes   │    │ 8 random    │ fragment 1 … fragment k   │
//	└───────────────────┴────┴─────────────┴───────────────────────────┘
//
//	id    key (32 bytes)                                          AEAD
//	0x00  Argon2id(password, salt, time 1, 64 MiB, 4 threads)     AES-256-GCM
//	0x01  Argon2id, as for 0x00                                   ChaCha20-Poly1305
//	0x02  PBKDF2-HMAC-SHA256(password, salt, 8192 iterations)     AES-256-GCM
//
// The stream cuts the plaintext of n bytes into k = max(1, ⌈n/BufSize⌉)
// pieces, every one BufSize long but the last (which is empty only when
// n is 0), and seals piece i (counting from 1) on its own:
//
//	fragment i = AEAD.Seal(key, nonce ‖ le32(i), piece i, flag ‖ T)  (piece + 16-byte tag)
//	flag       = 0x80 on the last fragment, 0x00 on the others
//	T          = AEAD.Seal(key, nonce ‖ le32(0), empty, empty)        (16 bytes: a tag of nothing)
//
// The 12-byte AEAD nonce is the message's 8-byte nonce followed by a
// little-endian fragment counter, which is why the header carries only 8
// bytes. Counter 0 is spent on T, which stands in for the stream's
// associated data (here none). The counter pins each fragment's place,
// so fragments cannot be reordered, and the flag marks the end, so a
// message cut at a fragment boundary fails as surely as one cut inside a
// fragment. A sealed message is therefore
//
//	SealedSize(n) = 41 + n + 16·max(1, ⌈n/BufSize⌉) bytes
//
// (57 for an empty plaintext), and its length alone bounds the plaintext
// inside, which lets Open refuse an oversized body before any work.
//
// A wrong password and a tampered message are indistinguishable: both are
// a failed authentication of the first fragment that does not verify, and
// both are reported as ErrDecrypt.
//
// # Costs
//
// Argon2id as madmin-go parameterises it takes 64 MiB of memory and
// about 40–200 ms of CPU (four threads) per derivation, and every
// message needs one: mc picks a fresh salt for each request, so there is
// nothing to cache. At most MaxConcurrentArgon2 derivations run at once
// in the process; further callers wait their turn, so a flood of admin
// requests costs latency, not 64 MiB each. PBKDF2 (id 0x02, 8192 rounds
// of HMAC-SHA256) takes about 2 ms and no memory worth counting and is
// not limited. The AEAD work is negligible next to either.
//
// Open returns at most MaxPlaintext bytes (OpenLimit takes another bound):
// admin documents are small, and a peer must not make us decrypt and
// hold an arbitrarily large body. The check is on the message length,
// before the key is derived.
package sealed
