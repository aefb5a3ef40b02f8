/* Test fixture: a small deterministic trace (two phases, leaks, copies, kernels, uses, an OOM). */
#ifndef VT_TEST_SQL_FIXTURE_H
#define VT_TEST_SQL_FIXTURE_H

/*
 * Timeline of rank r (ns on the CUPTI clock; MiB = 1048576 bytes), device 0,
 * stream 7, host thread 100 (rank 1: pid 4243, and the validation buffer at
 * 0x40000000 is 256 MiB instead of 128 MiB):
 *
 *   NVTX  "train" 1000..50000 (push/pop, depth 0), "forward" 10000..15000 (depth 1),
 *         "validation" 50000..80000, mark "checkpoint" at 81000
 *   500    alloc  device 64 MiB @0x10000000 (init_model, model.py:10)   never freed
 *   1500   alloc  pinned  4 MiB @0x7f0000000000 (load_batch, data.py:17) freed 90000
 *   2000   alloc  device 16 MiB @0x20000000 (train_step, model.py:42)  freed 20000
 *   3000   alloc  device 32 MiB @0x30000000 (train_step, model.py:42)  freed 30000
 *   3500   memset 32 MiB on 0x30000000 (3500..3600)
 *   4000   memcpy HtoD pageable->device 4 MiB into 0x20000000 (4000..6000)
 *   8000   memcpy HtoD pinned->device   4 MiB into 0x30000000 (8000..8500)
 *   10000  kernel sgemm_fwd 10000..15000 uses 0x10000000, 0x20000000
 *   16000  kernel sgemm_bwd 16000..19000 uses 0x10000000, 0x20000000, 0x30000000
 *   25000  kernel adam_step 25000..26000 uses 0x10000000, 0x30000000
 *   52000  alloc  device 128 MiB @0x40000000 (validate, eval.py:88)     freed 70000
 *   53000  memcpy HtoD pageable->device 2 MiB into 0x40000000 (53000..54000)
 *   55000  alloc  device 8 MiB @0x50000000 (validate, eval.py:88)       never freed
 *   56000  kernel sgemm_fwd 56000..61000 uses 0x10000000, 0x40000000
 *   60000  memcpy DtoH device->pinned 1 MiB from 0x40000000 (60000..60200)
 *   65000  OOM cudaMalloc 1 GiB, free 512 MiB of 80 GiB (validate, eval.py:88)
 *   95000  memcpy HtoD pageable->device 1 MiB (95000..95500), no kernel running
 */
#include <sqlite3.h>
#include <stdio.h>

#include "vramtrace/schema.h"

#define VT_FIXTURE_SQL                                                                      \
    "INSERT INTO meta VALUES('pid','%d'),('rank','%d'),('hostname','node1'),"               \
    " ('start_ns','0'),('end_ns','100000'),('clock_anchor_cupti_ns','0'),"                  \
    " ('clock_anchor_wall_ns','1700000000000000000');"                                     \
    "INSERT INTO device(id,name,total_bytes,cc_major,cc_minor,sm_count) VALUES"             \
    " (0,'NVIDIA H100 80GB HBM3',85899345920,9,0,132);"                                     \
    "INSERT INTO string VALUES(1,'sgemm_fwd'),(2,'sgemm_bwd'),(3,'adam_step'),"             \
    " (4,'train'),(5,'forward'),(6,'validation'),(7,'checkpoint'),(8,'init_model'),"        \
    " (9,'model.py'),(10,'load_batch'),(11,'data.py'),(12,'train_step'),(13,'validate'),"  \
    " (14,'eval.py'),(15,'at::native::empty_cuda'),(16,'libtorch_cuda.so');"               \
    "INSERT INTO stack VALUES(1,111,2),(2,222,1),(3,333,2),(4,444,1);"                      \
    "INSERT INTO frame VALUES(1,0,1,NULL,12,9,42,NULL),(1,1,0,4096,15,NULL,NULL,16),"       \
    " (2,0,1,NULL,10,11,17,NULL),(3,0,1,NULL,13,14,88,NULL),(3,1,0,4096,15,NULL,NULL,16),"  \
    " (4,0,1,NULL,8,9,10,NULL);"                                                            \
    "INSERT INTO nvtx_range(id,t,dur,kind,name_id,domain_id,thread,depth) VALUES"       \
    " (1,1000,49000,0,4,NULL,100,0),(2,10000,5000,0,5,NULL,100,1),"                        \
    " (3,50000,30000,0,6,NULL,100,0),(4,81000,0,2,7,NULL,100,0);"                       \
    "INSERT INTO memory_event(t,op,mem_kind,address,bytes,device,correlation,api,thread,"  \
    " stack_id) VALUES"                                                                     \
    " (500,1,3,268435456,67108864,0,1,1,100,4),"                                            \
    " (1500,1,2,139637976727552,4194304,0,2,6,100,2),"                                      \
    " (2000,1,3,536870912,16777216,0,3,1,100,1),"                                           \
    " (3000,1,3,805306368,33554432,0,4,1,100,1),"                                           \
    " (20000,2,3,536870912,16777216,0,5,2,100,1),"                                          \
    " (30000,2,3,805306368,33554432,0,6,2,100,1),"                                          \
    " (52000,1,3,1073741824,%lld,0,7,1,100,3),"                                             \
    " (55000,1,3,1342177280,8388608,0,8,1,100,3),"                                          \
    " (70000,2,3,1073741824,%lld,0,9,2,100,3),"                                             \
    " (90000,2,2,139637976727552,4194304,0,10,8,100,2);"                                    \
    "INSERT INTO oom_event(t,api,correlation,device,bytes,status,free_bytes,total_bytes,"  \
    " thread,stack_id) VALUES(65000,1,11,0,1073741824,2,536870912,85899345920,100,3);"     \
    "INSERT INTO api_call(api,correlation,t,dur,thread,device,status,bytes,ptr,"        \
    " stack_id) VALUES"                                                                     \
    " (1,1,400,100,100,0,0,67108864,268435456,4),(6,2,1400,100,100,0,0,4194304,"           \
    "  139637976727552,2),(1,3,1900,100,100,0,0,16777216,536870912,1),"                    \
    " (1,4,2900,100,100,0,0,33554432,805306368,1),(1,7,51900,100,100,0,0,%lld,"          \
    "  1073741824,3),(1,8,54900,100,100,0,0,8388608,1342177280,3),"                      \
    " (1,11,64000,1000,100,0,2,1073741824,NULL,3),(68,12,3900,100,100,0,0,4194304,NULL,1);"\
    "INSERT INTO memset(t,dur,device,stream,correlation,bytes,value,mem_kind,dst) VALUES"\
    " (3500,100,0,7,106,33554432,0,3,805306368);"                                          \
    "INSERT INTO memcpy(t,dur,device,stream,correlation,copy_kind,src_kind,dst_kind,"   \
    " bytes,is_async,src,dst) VALUES"                                                       \
    " (4000,2000,0,7,12,1,1,3,4194304,0,NULL,536870912),"                                   \
    " (8000,500,0,7,102,1,2,3,4194304,1,139637976727552,805306368),"                       \
    " (53000,1000,0,7,201,1,1,3,2097152,0,NULL,1073741824),"                               \
    " (60000,200,0,7,202,2,3,2,1048576,1,1073741824,139637976727552),"                    \
    " (95000,500,0,7,301,1,1,3,1048576,0,NULL,268435456);"                                \
    "INSERT INTO kernel(t,dur,device,stream,correlation,name_id,grid_x,grid_y,grid_z,"  \
    " block_x,block_y,block_z,static_smem,dynamic_smem,registers) VALUES"                   \
    " (10000,5000,0,7,103,1,128,1,1,256,1,1,0,4096,64),"                                   \
    " (16000,3000,0,7,104,2,128,1,1,256,1,1,0,4096,72),"                                   \
    " (25000,1000,0,7,105,3,64,1,1,128,1,1,1024,0,32),"                                    \
    " (56000,5000,0,7,203,1,128,1,1,256,1,1,0,4096,64);"                                   \
    "INSERT INTO buffer_use(correlation,kind,address,t,device) VALUES"                     \
    " (103,0,268435456,9900,0),(103,0,536870912,9900,0),"                                   \
    " (104,0,268435456,15900,0),(104,0,536870912,15900,0),(104,0,805306368,15900,0),"       \
    " (105,0,268435456,24900,0),(105,0,805306368,24900,0),"                                 \
    " (203,0,268435456,55900,0),(203,0,1073741824,55900,0),"                                \
    " (106,3,805306368,3500,0),(12,2,536870912,4000,0),(102,2,805306368,8000,0),"           \
    " (201,2,1073741824,53000,0),(202,1,1073741824,60000,0);"

/* Create the fixture trace of the given rank at zPath (replacing it). Returns 0 or -1. */
static int vt_fixture_write(const char *zPath, int rank)
{
    sqlite3 *db = NULL;
    long long valBytes = rank ? 268435456LL : 134217728LL;
    char *zSql;
    int rc;
    remove(zPath);
    if (sqlite3_open(zPath, &db) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    rc = vt__schema_create(db, NULL);
    zSql = sqlite3_mprintf(VT_FIXTURE_SQL, 4242 + rank, rank, valBytes, valBytes, valBytes);
    if (rc == SQLITE_OK && zSql) rc = sqlite3_exec(db, zSql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = vt__schema_index(db);
    sqlite3_free(zSql);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

#endif
