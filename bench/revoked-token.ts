/**
 * A token's first request after it was regenerated away (issue 23): the 401 path of a token the
 * service had just let in. Over one keep-alive connection, one request at a time, each round:
 *
 * 1. regenerate the team's token (as the organization's owner): secret A;
 * 2. GET the team with A (its first use: A is looked up and remembered), then again, timed —
 *    the reference: a request of a valid, remembered token;
 * 3. regenerate again: A is revoked;
 * 4. GET the team with A, timed: its first request since — 401 (the measure);
 * 5. GET the team with a secret that never existed, timed: 401 (for comparison).
 *
 * Milliseconds to the end of each answer's body; p50 and p90 of `rounds` rounds after `warmup`.
 */
export interface RevokedSamples { valid: number[], revoked: number[], never: number[] }

async function timed (url: string, init: RequestInit): Promise<{ ms: number, status: number, text: string }> {
  const began = performance.now()
  const res = await fetch(url, init)
  const text = await res.text()
  return { ms: performance.now() - began, status: res.status, text }
}

export async function measureRevokedFirstRequest (base: string, ownerToken: string, team: string, rounds: number, warmup: number): Promise<RevokedSamples> {
  const regenerate = `${base}/api/v2/teams/${team}/authentication-token`
  const show = `${base}/api/v2/teams/${team}`
  const as = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } })
  const samples: RevokedSamples = { valid: [], revoked: [], never: [] }
  const newSecret = async (): Promise<string> => {
    const answer = await timed(regenerate, { method: 'POST', headers: { authorization: `Bearer ${ownerToken}` } })
    if (answer.status !== 201) throw new Error(`regenerating ${team}'s token: ${answer.status} ${answer.text}`)
    return (JSON.parse(answer.text) as { data: { attributes: { token: string } } }).data.attributes.token
  }
  const expect = (answer: { status: number, text: string }, status: number, what: string) => {
    if (answer.status !== status) throw new Error(`${what}: ${answer.status}, not ${status}: ${answer.text}`)
  }
  for (let round = 0; round < warmup + rounds; round++) {
    const secret = await newSecret()
    expect(await timed(show, as(secret)), 200, 'a new token\'s first request')
    const valid = await timed(show, as(secret))
    expect(valid, 200, 'a valid token\'s request')
    await newSecret()
    const revoked = await timed(show, as(secret))
    expect(revoked, 401, 'the regenerated-away token\'s first request')
    const never = await timed(show, as(`never-valid-${round}-${secret.slice(0, 12)}`))
    expect(never, 401, 'a never-valid token')
    if (round >= warmup) {
      samples.valid.push(valid.ms)
      samples.revoked.push(revoked.ms)
      samples.never.push(never.ms)
    }
  }
  return samples
}
