// The HTML scraper (request-plugin.md §4): CSS selectors with index/text/attr/match/split/replace/
// trim/int/list/each, cheerio underneath, every regex operand through the engine's pattern screen.
import { type IncomingMessage, type ServerResponse } from 'node:http'
import t from 'tap'
import { Mapper } from '../engine/index.js'
import { createRequest } from '../extensions/request/index.js'
import { upstream } from './request-support.js'

const PAGE = `<html><head><title>Ghostwriting Federalism | Yale Law Journal</title></head><body>
<h1>Ghostwriting Federalism | Yale Law Journal</h1>
<p class="by">By Kurt T. Lash*</p>
<p class="x">a|b|c</p>
<span class="count">  Cited 1,204 times  </span>
<span class="zero">0</span>
<a class="pdf" href="/files/article.pdf" data-size="2 MB">PDF</a>
<ul class="authors">
  <li><a href="/a/1">Ada</a> <em>Editor</em></li>
  <li><a href="/a/2">Grace</a> <em>Author</em></li>
  <li><a href="/a/3">Kurt</a></li>
</ul>
<ol class="pages"><li>12</li><li>13</li><li>n/a</li></ol>
</body></html>`

function page(html = PAGE) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('content-type', 'text/html; charset=utf-8')
    res.end(html)
  }
}

async function scrape(origin: string, scraper: Record<string, unknown>): Promise<Record<string, unknown>> {
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map({ mapping: { '/data': { request: { origin, pathname: '/article', scraper, pointer: '/data' } } } }, {})
  return result.data as Record<string, unknown>
}

t.test('selector with text, replace pairs in order, trim', async (t) => {
  const up = await upstream(t, page())
  t.same(
    await scrape(up.origin, {
      title: { selector: 'h1', text: true, replace: [['\\s*\\|.*$', '']] },
      author: { selector: 'p.by', replace: [['^By\\s+', ''], ['\\*+$', '']] },
      plain: { selector: 'title' },
      count: { selector: '.count', trim: true },
    }),
    { title: 'Ghostwriting Federalism', author: 'Kurt T. Lash', plain: 'Ghostwriting Federalism | Yale Law Journal', count: 'Cited 1,204 times' }
  )
})

t.test('split, then replace on every part', async (t) => {
  const up = await upstream(t, page())
  t.same(await scrape(up.origin, { parts: { selector: 'p.x', split: '|', replace: [['a', 'Z']] } }), { parts: ['Z', 'b', 'c'] })
})

t.test('attr takes the first match\'s attribute; index picks one element (0, 1, -1)', async (t) => {
  const up = await upstream(t, page())
  t.same(
    await scrape(up.origin, {
      pdf: { selector: 'a.pdf', attr: 'href' },
      size: { selector: 'a.pdf', attr: 'data-size' },
      firstAuthor: { selector: '.authors li a', index: 0 },
      secondLink: { selector: '.authors li a', index: 1, attr: 'href' },
      lastAuthor: { selector: '.authors li a', index: -1 },
      missingAttr: { selector: 'a.pdf', attr: 'title' },
      missingElement: { selector: 'table' },
    }),
    { pdf: '/files/article.pdf', size: '2 MB', firstAuthor: 'Ada', secondLink: '/a/2', lastAuthor: 'Kurt' },
    'a field that matched nothing is left out'
  )
})

t.test('match keeps the first match; int parses base 10 (0 included)', async (t) => {
  const up = await upstream(t, page())
  t.same(
    await scrape(up.origin, {
      cited: { selector: '.count', match: '[0-9][0-9,]*', replace: [[',', '']], int: true },
      zero: { selector: '.zero', int: true },
      noMatch: { selector: '.count', match: 'xyz' },
    }),
    { cited: 1204, zero: 0 }
  )
})

t.test('list gives one value per matched element; int marks what does not parse as null', async (t) => {
  const up = await upstream(t, page())
  t.same(
    await scrape(up.origin, {
      names: { selector: '.authors li a', list: true },
      pages: { selector: '.pages li', list: true, int: true },
      none: { selector: '.nothing li', list: true },
    }),
    { names: ['Ada', 'Grace', 'Kurt'], pages: [12, 13, null], none: [] }
  )
})

t.test('each applies a sub-spec to every matched element', async (t) => {
  const up = await upstream(t, page())
  t.same(
    await scrape(up.origin, {
      authors: { selector: '.authors li', each: { name: { selector: 'a' }, href: { selector: 'a', attr: 'href' }, role: { selector: 'em' } } },
    }),
    {
      authors: [
        { name: 'Ada', href: '/a/1', role: 'Editor' },
        { name: 'Grace', href: '/a/2', role: 'Author' },
        { name: 'Kurt', href: '/a/3' },
      ],
    }
  )
})

t.test('scraper keys cannot reach a prototype', async (t) => {
  const up = await upstream(t, page())
  const data = await scrape(up.origin, JSON.parse('{"__proto__": {"selector": "h1"}}') as Record<string, unknown>)
  t.ok(Object.hasOwn(data, '__proto__'))
  t.equal(Object.getPrototypeOf(data), Object.prototype)
})

t.test('a scraper on a non-HTML response is not applied', async (t) => {
  const up = await upstream(t, (_req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end('{"a":1}')
  })
  const mapper = new Mapper({}, { plugins: { request: createRequest() } })
  const result = await mapper.map({ mapping: { '/e': { request: { origin: up.origin, scraper: { h: { selector: 'h1' } } } } } }, {})
  t.same(result.e, { status: 200, 'content-type': 'application/json', json: { a: 1 } })
})

t.test('unsafe or invalid patterns are refused before any request is sent', async (t) => {
  const up = await upstream(t, page())
  const cases: Array<[Record<string, unknown>, string | RegExp]> = [
    [{ t: { selector: 'h1', match: '(a+)+$' } }, 'scraper t.match refused: pattern must not quantify a group that contains a quantifier (KW-pattern-2)'],
    [{ t: { selector: 'h1', replace: [['ok', ''], ['(x*)*y', '']] } }, 'scraper t.replace[1] refused: pattern must not quantify a group that contains a quantifier (KW-pattern-2)'],
    [{ t: { selector: 'h1', match: '([a-z' } }, 'scraper t.match refused: pattern must be a valid regular expression (KW-pattern-1)'],
    [{ t: { selector: 'h1', match: '(?<=a)b' } }, 'scraper t.match refused: pattern must run in linear time: no backreferences, lookahead or lookbehind, and no repetition count above 16 (KW-pattern-1)'],
    [{ t: { selector: 'h1', match: 'a'.repeat(1) + 'b?'.repeat(30) } }, 'scraper t.match refused: pattern must not contain more than 25 quantifiers (KW-pattern-3)'],
    [{ list: { selector: 'li', each: { inner: { match: '(a|a)*+' } } } }, /^scraper list\.each\.inner\.match refused: /],
    [{ t: { selector: 'h1', match: `[${'\\u0101'.repeat(200)}]{16}` } }, 'scraper t.match refused: pattern must not be longer than 1000 characters (KW-pattern-4)'],
    [{ t: { selector: 'h1', replace: [['[\\s\\S]{16}', '']] } }, 'scraper t.replace[0] refused: pattern must not compile to more than 128 character ranges (KW-pattern-4)'],
  ]
  for (const [scraper, message] of cases) {
    await t.rejects(scrape(up.origin, scraper), { message }, JSON.stringify(scraper))
  }
  t.same(up.hits, [], 'zero hits: the scraper is checked before the request')
})

t.test('malformed scraper specs are refused with the field named', async (t) => {
  const up = await upstream(t, page())
  const cases: Array<[unknown, string | RegExp]> = [
    [{ t: { selector: 'div[' } }, /^scraper t\.selector "div\[" is not a valid CSS selector/],
    [{ t: { selector: 'h1', extract: true } }, /^scraper t: extract is not a scraper key/],
    [{ t: { selector: 'h1', text: true, attr: 'id' } }, 'scraper t: use text or attr, not both'],
    [{ t: { selector: 'li', each: { a: {} }, trim: true } }, 'scraper t: each cannot be combined with trim'],
    [{ t: { index: 1.5 } }, 'scraper t.index must be an integer'],
    [{ t: { replace: ['a', 'b'] } }, 'scraper t.replace[0] must be a [pattern, replacement] pair of strings'],
    [{ t: 'h1' }, 'scraper t must be an object'],
    [['h1'], 'request option scraper must be an object of named fields'],
  ]
  for (const [scraper, message] of cases) {
    await t.rejects(scrape(up.origin, scraper as Record<string, unknown>), { message }, JSON.stringify(scraper))
  }
  t.same(up.hits, [])
})
