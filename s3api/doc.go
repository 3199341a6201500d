// Package s3api will be the HTTP edge: routing, SigV4 authentication, XML
// bodies, S3 error codes decided once from the store's error kinds, and
// request logging.
//
// It arrives with the S3 front end issue; it may import store only.
package s3api
