module github.com/xfs3/xfs3

go 1.26.0

require github.com/klauspost/compress v1.20.4

require (
	github.com/gorilla/mux v1.8.1 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/rs/zerolog v1.35.1 // indirect
)

require (
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/minio/md5-simd v1.1.2 // indirect
	github.com/minio/minio-go/v7 v7.4.1
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)
