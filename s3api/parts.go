package s3api

import (
	"net/http"
	"strconv"

	"github.com/xfs3/xfs3/store"
)

// partRange resolves ?partNumber=n (0: absent, nil range) of a GET or
// HEAD to the part's bytes, and sets x-amz-mp-parts-count for a multipart
// object. Parts are named by the numbers they were completed with (a gap
// in them names no part). An object stored whole is one part, number 1,
// without the count header. A part number the object lacks is 416
// InvalidPartNumber. An empty part gives an empty range: answered 200,
// since no Content-Range can name zero bytes.
func partRange(o *store.Object, n int, h http.Header) (*byteRange, error) {
	if n == 0 {
		return nil, nil
	}
	parts, err := o.Parts()
	if err != nil {
		return nil, err
	}
	if parts == nil {
		if n != 1 {
			return nil, &s3Error{code: "InvalidPartNumber"}
		}
		return &byteRange{first: 0, last: o.Info.Size - 1}, nil
	}
	h.Set("X-Amz-Mp-Parts-Count", strconv.Itoa(len(parts)))
	for _, p := range parts {
		if p.PartNumber == n {
			return &byteRange{first: p.Offset, last: p.Offset + p.Size - 1}, nil
		}
	}
	return nil, &s3Error{code: "InvalidPartNumber"}
}
