package fleet

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisStore keeps each bucket of a key as a Redis hash named
// <prefix>{<command key>}:<interval>:<index>, whose fields are instances
// and whose values are "total errors slow". A whole exchange is one
// script call: it writes the instance's buckets, sets their expiry and
// sums the others' fields of the window, so that an instance costs Redis
// one round trip per health interval and per key, and reads back three
// numbers per bucket whatever the size of the fleet. Each exchange also
// writes the instance's mark, <prefix>{<command key>}:<interval>:mark:
// <instance>, which expires a few intervals later: the next exchange that
// finds it gone learns that Redis lost its data, whether the instance
// wrote buckets or not. The braces make every bucket of a key, and the
// marks, one Redis Cluster hash slot, as a script's keys must be.
type redisStore struct {
	client redis.UniversalClient
	prefix string
}

// exchangeScript runs an exchange. KEYS are the buckets read, oldest
// first, then the instance's mark. ARGV: the instance, 1 if the mark
// should be there already (exchange.marked), else 0, how long the mark
// lives in milliseconds, the number of writes, then per write the
// position of its bucket in KEYS, its total, errors and slow, its expiry
// in milliseconds, and 1 if the bucket should hold this instance's
// counts already (bucketWrite.again), else 0. A write only lengthens a
// bucket's expiry: an instance whose window is shorter (during a deploy
// that changes it) must not expire a bucket that the others still read.
// It returns the total, errors and slow of the other instances per
// bucket read, then how many other instances wrote, then 1 if a write
// that should have found this instance's counts added them anew, or the
// mark that should have been there was not (Redis lost them), else 0,
// then how many of the other instances' values it skipped as corrupt
// (not three counts, or more errors or slow calls than executions),
// then Redis's clock (TIME: seconds and
// microseconds), which Source.Stats compares with the instance's. TIME
// comes after the writes, where every Redis since 3.2 lets a script read
// it.
var exchangeScript = redis.NewScript(`
local me, writes, lost = ARGV[1], tonumber(ARGV[4]), 0
local buckets, mark = #KEYS - 1, KEYS[#KEYS]
if redis.call('EXISTS', mark) == 0 and ARGV[2] == '1' then
	lost = 1
end
redis.call('SET', mark, '1', 'PX', ARGV[3])
for i = 0, writes - 1 do
	local at = 5 + 6 * i
	local key = KEYS[tonumber(ARGV[at])]
	local added = redis.call('HSET', key, me, ARGV[at + 1] .. ' ' .. ARGV[at + 2] .. ' ' .. ARGV[at + 3])
	if added == 1 and ARGV[at + 5] == '1' then
		lost = 1
	end
	local expiry = tonumber(ARGV[at + 4])
	if redis.call('PTTL', key) < expiry then
		redis.call('PEXPIRE', key, expiry)
	end
end
local out, seen, instances, corrupt = {}, {}, 0, 0
for k = 1, buckets do
	local key = KEYS[k]
	local total, errors, slow = 0, 0, 0
	local fields = redis.call('HGETALL', key)
	for j = 1, #fields, 2 do
		local who = fields[j]
		if who ~= me then
			local t, e, s = string.match(fields[j + 1], '^(%d+) (%d+) (%d+)$')
			if t then
				t, e, s = tonumber(t), tonumber(e), tonumber(s)
			end
			if t and e <= t and s <= t then
				total, errors, slow = total + t, errors + e, slow + s
				if not seen[who] then
					seen[who] = true
					instances = instances + 1
				end
			else
				corrupt = corrupt + 1
			end
		end
	end
	out[#out + 1] = total
	out[#out + 1] = errors
	out[#out + 1] = slow
end
out[#out + 1] = instances
out[#out + 1] = lost
out[#out + 1] = corrupt
local now = redis.call('TIME')
out[#out + 1] = tonumber(now[1])
out[#out + 1] = tonumber(now[2])
return out
`)

// bucketKey names bucket index of key for buckets of x.interval.
func (s redisStore) bucketKey(x *exchange, index int64) string {
	return s.prefix + "{" + x.key + "}:" + x.interval.String() + ":" + strconv.FormatInt(index, 10)
}

// markKey names x.instance's mark, which its every exchange writes: in
// the slot of the key's buckets, and no bucket's name, whose last part is
// a number.
func (s redisStore) markKey(x *exchange) string {
	return s.prefix + "{" + x.key + "}:" + x.interval.String() + ":mark:" + x.instance
}

func (s redisStore) exchange(ctx context.Context, x exchange) (reading, error) {
	keys := make([]string, x.buckets, x.buckets+1)
	for i := range keys {
		keys[i] = s.bucketKey(&x, x.from+int64(i))
	}
	keys = append(keys, s.markKey(&x))
	marked := 0
	if x.marked {
		marked = 1
	}
	args := make([]any, 0, 4+6*len(x.writes))
	args = append(args, x.instance, marked, max(x.markExpiry().Milliseconds(), 1), len(x.writes))
	for _, w := range x.writes {
		again := 0
		if w.again {
			again = 1
		}
		args = append(args, w.index-x.from+1, w.counts.total, w.counts.errors, w.counts.slow, max(w.expiry.Milliseconds(), 1), again)
	}
	vals, err := exchangeScript.Run(ctx, s.client, keys, args...).Int64Slice()
	if err != nil {
		return reading{}, err
	}
	if len(vals) != 3*x.buckets+5 {
		return reading{}, fmt.Errorf("fleet: the exchange script returned %d values for %d buckets", len(vals), x.buckets)
	}
	r := reading{
		others:    make([]counts, x.buckets),
		instances: int(vals[3*x.buckets]),
		lost:      vals[3*x.buckets+1] != 0,
		corrupt:   int(vals[3*x.buckets+2]),
		storeTime: time.Unix(vals[3*x.buckets+3], vals[3*x.buckets+4]*int64(time.Microsecond)),
	}
	for i := range r.others {
		r.others[i] = counts{vals[3*i], vals[3*i+1], vals[3*i+2]}
	}
	return r, nil
}
