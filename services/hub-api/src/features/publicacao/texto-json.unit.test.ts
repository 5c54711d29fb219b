import { membrosDoTexto, membrosDoValor, textoDoMembro } from './texto-json';

describe('textoDoMembro: the exact text of a top-level member', () => {
  test('When dados holds a 20-digit integer, then its text keeps every digit', () => {
    expect(textoDoMembro('{"a":1,"dados":{"n": 12345678901234567890123}}', 'dados')).toBe(
      '{"n": 12345678901234567890123}',
    );
  });

  test('When strings hold braces, quotes and escapes, then the value ends where JSON says', () => {
    const json = '{"x":"}\\"{","dados":["a\\\\",{"b":"]}"}],"z":null}';
    expect(textoDoMembro(json, 'dados')).toBe('["a\\\\",{"b":"]}"}]');
  });

  test('When dados appears twice or with an escaped name, then the last one wins, as with JSON.parse', () => {
    expect(textoDoMembro('{"dados":1,"d\\u0061dos":2}', 'dados')).toBe('2');
    expect(textoDoMembro(' { "dados" : true , "dados" : -1.5e3 } ', 'dados')).toBe('-1.5e3');
  });

  test('When a nested object has a member dados, then it is not the top-level one', () => {
    expect(textoDoMembro('{"outro":{"dados":1}}', 'dados')).toBeUndefined();
    expect(textoDoMembro('[{"dados":1}]', 'dados')).toBeUndefined();
  });

  test('When the text is any valid object, then the cut text parses to the same value as JSON.parse gives', () => {
    const valor = { a: [1, { b: 'c"}' }], dados: { x: [null, false, 'é\n'], y: { z: {} } }, w: 2 };
    const texto = JSON.stringify(valor, null, 2);
    expect(JSON.parse(textoDoMembro(texto, 'dados')!)).toEqual(valor.dados);
  });
});

describe('strings with runs of backslashes before a quote', () => {
  test('When a string ends in an even or odd run of backslashes, then the value ends where JSON.parse says', () => {
    const valores = ['\\', '\\\\', '"', '\\"', '\\\\"\\', 'a\\"}]{[', { '\\"': ['"\\', '\\\\\\'] }];
    for (const v of valores) {
      const texto = JSON.stringify({ antes: v, dados: v, depois: v });
      expect(textoDoMembro(texto, 'dados')).toBe(JSON.stringify(v));
      expect(membrosDoTexto(texto)).toBe(membrosDoValor(JSON.parse(texto)));
    }
  });
});

describe('membrosDoTexto and membrosDoValor: a name repeated within an object', () => {
  test('When no object repeats a name, then the text and its parse count the same members, colons in strings aside', () => {
    const json = '{"a":"x:y","b":[{"c":1,"d":{"e":":"}}],"f\\\\":null}';
    expect(membrosDoTexto(json)).toBe(6);
    expect(membrosDoValor(JSON.parse(json))).toBe(6);
  });

  test('When an object repeats a name, then the text counts more members than its parse', () => {
    const json = '[{"a":1,"b":{"c":1,"c":2}}]';
    expect(membrosDoTexto(json)).toBe(4);
    expect(membrosDoValor(JSON.parse(json))).toBe(3);
  });

  test('When the text nests 200,000 levels, then it is counted without recursion', () => {
    expect(membrosDoTexto(`{"a":${'['.repeat(200_000)}${']'.repeat(200_000)},"a":1}`)).toBe(2);
  });
});
