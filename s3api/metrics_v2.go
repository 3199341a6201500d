package s3api

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/xfs3/xfs3/store"
)

// /minio/v2/metrics/cluster, where "mc admin prometheus generate" points
// Prometheus, serves every series of /minio/metrics/v3 and, beside them,
// those of MinIO's v2 names whose meaning is exactly one of ours, so
// that dashboards made for MinIO show them. xfs3 is one server with one
// drive and no parity: raw and usable capacity are the same, and the
// quorum is that drive. MinIO's names that would need a meaning xfs3
// does not have (bucket usage as object sizes, erasure sets, healing,
// replication) are not made up.
var (
	v2RawTotal     = newMetric("minio_cluster_capacity_raw_total_bytes", "Total capacity online in the cluster (the volume as df shows it, log excluded).", prometheus.GaugeValue)
	v2RawFree      = newMetric("minio_cluster_capacity_raw_free_bytes", "Total free capacity online in the cluster.", prometheus.GaugeValue)
	v2UsableTotal  = newMetric("minio_cluster_capacity_usable_total_bytes", "Total usable capacity online in the cluster (no parity: the raw capacity).", prometheus.GaugeValue)
	v2UsableFree   = newMetric("minio_cluster_capacity_usable_free_bytes", "Total free usable capacity online in the cluster.", prometheus.GaugeValue)
	v2DrivesOnline = newMetric("minio_cluster_drive_online_total", "Total drives online in this cluster (the volume, while it accepts changes).", prometheus.GaugeValue)
	v2DrivesOff    = newMetric("minio_cluster_drive_offline_total", "Total drives offline in this cluster (the volume, once a failed write shut it down).", prometheus.GaugeValue)
	v2Drives       = newMetric("minio_cluster_drive_total", "Total drives in this cluster.", prometheus.GaugeValue)
	v2NodesOnline  = newMetric("minio_cluster_nodes_online_total", "Total number of MinIO nodes online.", prometheus.GaugeValue)
	v2NodesOff     = newMetric("minio_cluster_nodes_offline_total", "Total number of MinIO nodes offline.", prometheus.GaugeValue)
	v2Buckets      = newMetric("minio_cluster_bucket_total", "Total number of buckets in the cluster.", prometheus.GaugeValue)
	v2Health       = newMetric("minio_cluster_health_status", "Get current cluster health status (1 while writes are accepted).", prometheus.GaugeValue)
	v2WriteQuorum  = newMetric("minio_cluster_write_quorum", "Maximum write quorum across all pools and sets.", prometheus.GaugeValue)

	minioV2Metrics = []metric{v2RawTotal, v2RawFree, v2UsableTotal, v2UsableFree, v2DrivesOnline, v2DrivesOff,
		v2Drives, v2NodesOnline, v2NodesOff, v2Buckets, v2Health, v2WriteQuorum}
)

// minioV2Registry holds the collector of MinIO's v2 names over st.
func minioV2Registry(st *store.Store) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(minioV2Collector{st})
	return reg
}

// minioV2Collector reads the store when Prometheus scrapes, as
// storeCollector does.
type minioV2Collector struct{ store *store.Store }

func (c minioV2Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range minioV2Metrics {
		ch <- m.desc
	}
}

func (c minioV2Collector) Collect(ch chan<- prometheus.Metric) {
	emit := func(m metric, v float64) { ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v) }
	writable := boolValue(c.store.Err() == nil)
	emit(v2DrivesOnline, writable)
	emit(v2DrivesOff, 1-writable)
	emit(v2Drives, 1)
	emit(v2NodesOnline, 1)
	emit(v2NodesOff, 0)
	emit(v2Health, writable)
	emit(v2WriteQuorum, 1)
	if vs, err := c.store.VolumeStats(); err != nil {
		ch <- prometheus.NewInvalidMetric(v2RawTotal.desc, err)
	} else {
		bs := float64(vs.BlockSize)
		total, free := float64(vs.Blocks-vs.LogBlocks)*bs, float64(vs.FreeBlocks)*bs
		emit(v2RawTotal, total)
		emit(v2RawFree, free)
		emit(v2UsableTotal, total)
		emit(v2UsableFree, free)
	}
	if bs, err := c.store.ListBuckets(); err != nil {
		ch <- prometheus.NewInvalidMetric(v2Buckets.desc, err)
	} else {
		emit(v2Buckets, float64(len(bs)))
	}
}
