module github.com/xfs3/xfs3

go 1.26

require github.com/klauspost/compress v1.20.4
