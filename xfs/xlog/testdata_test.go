package xlog

import "os"

func readTestdata(path string) ([]byte, error) { return os.ReadFile(path) }
