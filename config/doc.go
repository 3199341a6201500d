// Package config will hold typed configuration for xfs3 serve: defaults <
// config file < XFS3_* environment < flags, validated with clear messages.
//
// It imports nothing of ours.
package config
